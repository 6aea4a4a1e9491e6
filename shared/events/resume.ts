import type { Resume } from '#shared/data/connections';
import { hasEvent } from '#shared/data/events';
import type { Owner } from '#shared/db/keys';
import { feedCursor } from '#shared/events/cursor';

/**
 * Where a WebSocket opened with `?after=<event id>` resumes in its user's
 * feed. A bad cursor does not refuse the upgrade (a browser cannot read a
 * refused handshake's status): the connection is told why in an error
 * frame, then closed (shared/realtime/push.ts), and the client starts over.
 */
export async function resumePoint(owner: Owner, after: string | undefined): Promise<Resume> {
  if (after === undefined) return {};
  const cursor = feedCursor(owner, after);
  if ('problem' in cursor) return { cursorProblem: cursor.problem };
  return (await hasEvent(owner, cursor.seq, after)) ? { afterSeq: cursor.seq } : { cursorProblem: 'invalid' };
}
