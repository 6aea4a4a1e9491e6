import type { CursorProblem } from '#shared/data/connections';
import { feedPartition, type Feed } from '#shared/data/events';
import { feedPosition } from '#shared/data/event-ids';
import { retentionMs } from '#shared/data/event-retention';

/**
 * Where `after=<event id>` points in a feed: its number, or why it points
 * nowhere: not an event id of this feed (`invalid`), or older than the
 * retention (`expired`: the client starts over from a fresh read). Whether
 * the event exists is the reader's check (shared/data/events.ts, afterFound).
 */
export type Cursor = { seq: number } | { problem: CursorProblem };

export function feedCursor(feed: Feed, after: string | undefined, now = Date.now()): Cursor {
  if (after === undefined) return { seq: 0 };
  const position = feedPosition(feedPartition(feed), after);
  if (!position) return { problem: 'invalid' };
  if (position.createdMs < now - retentionMs()) return { problem: 'expired' };
  return { seq: position.seq };
}
