import { appendEvents, type Feed, type NewEvent } from '#shared/data/events';
import { accountEventsOf } from '#shared/stream/account';
import type { Change } from '#shared/stream/change';
import { batchReads, userEventsOf } from '#shared/stream/users';
import { inParallel } from '#shared/util/parallel';

/**
 * Changes turned into events at once (each reads a little: the message, a
 * conversation id). Under a burst of sends these reads were most of a
 * batch's time: with 32 rather than 8, 4 senders' frames waited p50 about
 * 0.5 to 0.8 s instead of 1.1 s under `npm start` (docs/realtime.md, Latency).
 */
const CHANGES_AT_ONCE = 32;
/** Feeds appended to at once: each feed's appends are in order, one after the other. */
const FEEDS_AT_ONCE = 16;

/** What is appended: the event without the id the change gave it, which names it instead (a batch handed over again appends nothing twice). */
const toAppend = ({ id, ...event }: { id: string; type: string; created_at: number }, createdMs: number): NewEvent => ({
  fromChange: id,
  createdMs,
  event,
});

/**
 * The events feeds' writer, a consumer of the change stream: each change's
 * events in the account's view go to the account's feed (what webhooks
 * deliver), in each user's view to that user's feed (what their WebSockets
 * carry). Within a feed, events are appended in the order the stream hands
 * over the changes: for the changes of one item, or of one partition (a
 * conversation's own item and its entries), the order of their commits.
 */
export async function recordEvents(changes: (Change | undefined)[]): Promise<number> {
  const reads = batchReads();
  const perChange: { feed: Feed; event: NewEvent }[][] = Array.from({ length: changes.length }, () => []);
  await inParallel(changes, CHANGES_AT_ONCE, async (change, i) => {
    if (!change) return;
    const [forAccount, forUsers] = await Promise.all([accountEventsOf(change), userEventsOf(change, reads)]);
    perChange[i] = [
      ...forAccount.map((e) => ({ feed: { accountId: e.accountId }, event: toAppend(e.event, change.createdMs) })),
      ...forUsers.map((e) => ({ feed: e.owner, event: toAppend(e.event, change.createdMs) })),
    ];
  });
  const byFeed = Map.groupBy(perChange.flat(), ({ feed }) => `${feed.accountId}|${feed.contactId ?? ''}`);
  let appended = 0;
  await inParallel([...byFeed.values()], FEEDS_AT_ONCE, async (entries) => {
    // In the batch's order, which is the stream's: the commits' order for each item (and each partition, as one shard
    // holds it). The writes' own time stamps are taken before their commits: sorting by them reordered racing sends.
    const events = entries.map((e) => e.event);
    // Not `appended += await …`: that reads the sum before the await, and feeds appended at once would lose each other's.
    const count = (await appendEvents(entries[0]!.feed, events)).length;
    appended += count;
  });
  return appended;
}
