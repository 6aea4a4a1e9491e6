import { transactNamed, txPut } from '#shared/db/batch';
import { condition } from '#shared/db/expression';
import { getItem, putItem, query, unlessConditionFails, type Item } from '#shared/db/items';
import { keys } from '#shared/db/keys';
import { feedEventId, MAX_SEQ } from '#shared/data/event-ids';
import { retentionDays } from '#shared/data/event-retention';

/**
 * A feed of events: a user's (their views: the realtime frames) or the
 * account's (the webhooks' bodies). Each event is one item numbered from 1
 * without a gap: an event is appended at the number after the last one, on
 * the condition that nobody took that number, so a reader that has seen
 * number n has seen every event before it.
 */
export type Feed = { accountId: string; contactId?: string };

/** An event as the feed keeps it: `id` is its place in the feed (shared/data/event-ids.ts). */
export interface FeedEvent {
  id: string;
  type: string;
  created_at: number;
  [field: string]: unknown;
}

/** An event to append: `fromChange` names it by the change it came from, the same when the stream hands that change over again. */
export interface NewEvent {
  fromChange: string;
  createdMs: number;
  event: Omit<FeedEvent, 'id'>;
}

const spec = (feed: Feed) =>
  feed.contactId === undefined
    ? { template: keys.accountEvent, values: { acct: feed.accountId } }
    : { template: keys.userEvent, values: { acct: feed.accountId, user: feed.contactId } };

export const feedPartition = (feed: Feed) => {
  const { template, values } = spec(feed);
  return template.partition(values as never);
};

const eventKey = (feed: Feed, seq: number) => {
  const { template, values } = spec(feed);
  return template.key({ ...values, seq } as never);
};

const seqOf = (item: Item) => Number(String(item.sk).slice(String(item.sk).indexOf('#') + 1));

/**
 * An append is skipped when its change's event is among the feed's last
 * ones: as many as are being appended, and TAIL more. A batch handed over
 * again after a failure (part of it appended, in order) comes back within
 * moments, long before other writers add this many.
 */
const TAIL = 10;
const MAX_TAIL = 250;
/** Appends that lost the next number to another writer: each reads the tail again. */
const MAX_ATTEMPTS = 8;

async function tailOf(feed: Feed, appending: number): Promise<{ head: number; headMs: number; seen: Set<string> }> {
  const { template } = spec(feed);
  const items = await query(
    { partition: feedPartition(feed), sort: ['begins_with', template.skPrefix], forward: false, projection: 'sk, from_change, id_ms' },
    Math.min(appending + TAIL, MAX_TAIL),
    1,
  );
  return {
    head: items[0] ? seqOf(items[0]) : 0,
    // Items written before id_ms have none: their ids are not ordered by time, and the next one's need not follow them.
    headMs: Number(items[0]?.id_ms ?? 0),
    seen: new Set(items.map((item) => String(item.from_change))),
  };
}

/**
 * From this many events waiting for one feed, they are appended in
 * transactions of up to TRANSACT_MAX events (and TRANSACT_MAX_BYTES of them,
 * under DynamoDB's 4 MB a transaction), all numbers or none (so no
 * reader sees a gap), instead of one conditional put after the other: a
 * burst to one account (its feed takes every event of the account) is
 * caught up in one round trip, where 20 puts in a row kept its users'
 * frames waiting over a second under `npm start` (docs/realtime.md,
 * Latency). A transaction's items cost two write units each, so the usual
 * one to three events a batch stay single puts.
 */
const TRANSACT_FROM = 4;
const TRANSACT_MAX = 100;
const TRANSACT_MAX_BYTES = 3_000_000;

/** What an item takes in a transaction beside its body (keys, attribute names). */
const ITEM_OVERHEAD_BYTES = 200;

/**
 * The items of the next write, numbered from `seq + 1`: one, or (from
 * TRANSACT_FROM waiting) as many as one transaction takes, at least one.
 */
function nextWrite(feed: Feed, partition: string, seq: number, afterMs: number, pending: NewEvent[]) {
  let ms = afterMs;
  const candidates = pending
    .slice(0, pending.length < TRANSACT_FROM ? 1 : TRANSACT_MAX)
    .map((next, i) => eventItem(feed, partition, seq + 1 + i, next, (ms = Math.max(ms, next.createdMs))));
  let taken = 1;
  let bytes = candidates[0]!.item.body.length + ITEM_OVERHEAD_BYTES;
  for (; taken < candidates.length; taken++) {
    bytes += candidates[taken]!.item.body.length + ITEM_OVERHEAD_BYTES;
    if (bytes > TRANSACT_MAX_BYTES) break;
  }
  return candidates.slice(0, taken);
}

/**
 * Appends events to one feed in their order; answers them with their ids.
 * Writers of one feed (a user's events come from several changes at once)
 * race for each number: the loser reads the tail again and carries on.
 */
export async function appendEvents(feed: Feed, events: NewEvent[]): Promise<FeedEvent[]> {
  const partition = feedPartition(feed);
  const appended: FeedEvent[] = [];
  let pending = events;
  for (let attempt = 1; pending.length > 0; attempt++) {
    if (attempt > MAX_ATTEMPTS) throw new Error(`feed ${partition}: no free number after ${MAX_ATTEMPTS} attempts`);
    const { head, headMs, seen } = await tailOf(feed, pending.length);
    pending = pending.filter((e) => !seen.has(e.fromChange));
    let seq = head;
    let lastMs = headMs;
    while (pending.length > 0) {
      const items = nextWrite(feed, partition, seq, lastMs, pending);
      if (seq + items.length > MAX_SEQ) throw new Error(`feed ${partition} is full`);
      const took =
        items.length === 1
          ? await unlessConditionFails(putItem(items[0]!.item, condition`attribute_not_exists(pk)`).then(() => true))
          : (await transactNamed(items.map(({ item }, i) => [String(i), txPut(item, condition`attribute_not_exists(pk)`)]))).length === 0;
      if (!took) break;
      appended.push(...items.map(({ event }) => event));
      lastMs = items.at(-1)!.item.id_ms;
      pending = pending.slice(items.length);
      seq += items.length;
    }
    if (pending.length > 0) await new Promise((r) => setTimeout(r, Math.random() * 20 * attempt));
  }
  return appended;
}

/**
 * Event number `seq` of the feed, and the item that holds it. Its id's time
 * is its change's, or the feed's last id's when that is later (changes of
 * other partitions commit in another order than their clocks read), so
 * that ids sort in the feed's order, as ids sort by time.
 */
function eventItem(feed: Feed, partition: string, seq: number, next: NewEvent, idMs: number) {
  const event = { id: feedEventId(partition, seq, idMs), ...next.event } as FeedEvent;
  const item = {
    ...eventKey(feed, seq),
    type: 'event',
    from_change: next.fromChange,
    id_ms: idMs,
    body: JSON.stringify(event),
    // From the id's time, which the cursor's 410 reads: an event gone by its TTL is past its retention by its id too.
    expires_at: Math.floor(idMs / 1000) + retentionDays() * 86_400,
  };
  return { event, item };
}

/** The event a feed item holds (a stream image or a read). */
export const eventOf = (item: Item): FeedEvent => JSON.parse(String(item.body)) as FeedEvent;

/**
 * Whether the feed has the event `id`, numbered `seq` (read strongly
 * consistent): the whole id, as an id whose number exists but whose time
 * part was changed names no event.
 */
export async function hasEvent(feed: Feed, seq: number, id: string): Promise<boolean> {
  const item = await getItem(eventKey(feed, seq), true);
  return item !== undefined && eventOf(item).id === id;
}

export interface EventsPage {
  events: FeedEvent[];
  hasMore: boolean;
  /** The number of the page's last event (`after` for an empty page). */
  lastSeq: number;
  /** Whether the event numbered `after` is there (always, for 0), with the id `afterId` when given: a cursor that names none is no cursor of this feed. */
  afterFound: boolean;
}

/**
 * Up to `limit` events after number `after`, oldest first, and whether
 * more follow: one Query (more only past 1 MB), which reads the `after` event too, to tell
 * whether it exists. Events past their retention that DynamoDB's TTL has
 * not removed yet are left out.
 */
export async function eventsAfter(feed: Feed, after: number, limit: number, afterId?: string): Promise<EventsPage> {
  const { skPrefix } = spec(feed).template;
  const low = eventKey(feed, Math.max(after, 1)).sk;
  // Until limit + 2 items or the feed's end: a Query stops at 1 MB, and 100 events of a message with its attachments pass it (a
  // page cut there and answered whole would say has_more false with events left: a client would stop short of them).
  const items = await query({ partition: feedPartition(feed), sort: ['between', low, `${skPrefix}~`] }, limit + 2);
  const afterFound =
    after === 0 || (items[0] !== undefined && seqOf(items[0]) === after && (afterId === undefined || eventOf(items[0]).id === afterId));
  const now = Date.now() / 1000;
  const live = items.filter((item) => seqOf(item) > after && Number(item.expires_at) > now);
  const page = live.slice(0, limit);
  return { events: page.map(eventOf), hasMore: live.length > limit, lastSeq: page.length ? seqOf(page.at(-1)!) : after, afterFound };
}
