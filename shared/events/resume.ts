import { hasEvent } from '#shared/data/events';
import type { Owner } from '#shared/db/keys';
import { feedCursor } from '#shared/events/cursor';

/**
 * Where a WebSocket opened with `?after=<event id>` resumes in its user's
 * feed (undefined without one), or the status its upgrade is refused with:
 * 400 for no event of that feed, 410 past the retention.
 */
export async function resumePoint(owner: Owner, after: string | undefined): Promise<{ afterSeq?: number } | { status: 400 | 410 }> {
  if (after === undefined) return {};
  const cursor = feedCursor(owner, after);
  if ('problem' in cursor) return { status: cursor.problem === 'expired' ? 410 : 400 };
  return (await hasEvent(owner, cursor.seq)) ? { afterSeq: cursor.seq } : { status: 400 };
}
