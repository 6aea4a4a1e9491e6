import { randomUUID } from 'node:crypto';
import { encodeTime } from 'ulid';
import { describe, expect, it } from 'vitest';
import { appendEvents, eventsAfter, type Feed, type NewEvent } from '#shared/data/events';
import { listEvents } from '#shared/events/list';

/**
 * Appending to an events feed on DynamoDB Local: one event per put, or a
 * burst (4 or more waiting) in transactions. Either way every number from 1
 * on is taken once, in the order given, with nothing twice.
 */
describe('appending to an events feed', () => {
  const events = (writer: string, count: number): NewEvent[] =>
    Array.from({ length: count }, (_, i) => ({
      fromChange: `${writer}-${i}`,
      createdMs: Date.now() + i,
      event: { type: 'test.event', created_at: Math.floor(Date.now() / 1000), writer, n: i },
    }));
  const all = async (feed: Feed) => (await eventsAfter(feed, 0, 100)).events;

  it('numbers a burst of events (appended in a transaction) one after the other, in order, and skips it when handed over again', async () => {
    // Given a new feed
    const feed = { accountId: `acct_${randomUUID()}` };
    // When one event, then a burst of 30, are appended
    await appendEvents(feed, events('single', 1));
    const burst = events('burst', 30);
    const appended = await appendEvents(feed, burst);
    // Then they are numbers 1 to 31, in the order given
    const stored = await all(feed);
    expect(stored.map((e) => e.n)).toEqual([0, ...burst.map((_, i) => i)]);
    expect(appended.map((e) => e.id)).toEqual(stored.slice(1).map((e) => e.id));
    // And the same burst handed over again (a batch retried) appends nothing
    expect(await appendEvents(feed, burst)).toEqual([]);
    expect(await all(feed)).toHaveLength(31);
  });

  it("splits a burst larger than a transaction takes (DynamoDB's 4 MB) and still numbers it in order", async () => {
    // Given a burst of 90 events of 50 KB each (4.5 MB together)
    const feed = { accountId: `acct_${randomUUID()}` };
    const big = events('big', 90).map((e) => ({ ...e, event: { ...e.event, text: 'x'.repeat(50_000) } }));
    // When it is appended
    await appendEvents(feed, big);
    // Then all 90 are stored, numbered in the order given (read a page at a time: a page holds 1 MB)
    const stored = [];
    for (let page = await eventsAfter(feed, 0, 100); ; page = await eventsAfter(feed, page.lastSeq, 100)) {
      stored.push(...page.events);
      if (!page.hasMore) break;
    }
    expect(stored.map((e) => e.n)).toEqual(big.map((_, i) => i));
  });

  it('answers GET /v1/events with as many large events as one response holds, has_more set, and the next page from there', async () => {
    // Given an account's feed of 80 events of about 90 KB each (a message with its reactions), 7 MB together
    const feed = { accountId: `acct_${randomUUID()}` };
    await appendEvents(
      feed,
      events('large', 80).map((e) => ({ ...e, event: { ...e.event, text: 'x'.repeat(90_000) } })),
    );
    const caller = { kind: 'secret' as const, accountId: feed.accountId, keyId: 'key_test' };
    // When it is read as the API reads it, 100 at a time
    const first = await listEvents(caller, { limit: 100 });
    // Then the first page holds fewer, within what a response takes, and says more follow
    expect(first.data.length).toBeGreaterThan(40);
    expect(first.data.length).toBeLessThan(80);
    expect(first.has_more).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(JSON.stringify(first)))).toBeLessThan(5_100_000);
    // And reading on from its last event gives the rest, every event once, in order
    const second = await listEvents(caller, { limit: 100, after: first.data.at(-1)!.id });
    expect(second.has_more).toBe(false);
    expect([...first.data, ...second.data].map((e) => e.n)).toEqual(Array.from({ length: 80 }, (_, i) => i));
  }, 60_000);

  it('lets writers racing for the same numbers each append all of theirs once, with no number twice or missing', async () => {
    // Given a new feed, and three writers of bursts and single events
    const feed = { accountId: `acct_${randomUUID()}` };
    const batches = [events('a', 12), events('b', 5), events('c', 2)];
    // When they append at once
    await Promise.all(batches.map((batch) => appendEvents(feed, batch)));
    // Then 19 events are stored, each once, each writer's in its order
    const stored = await all(feed);
    expect(stored).toHaveLength(19);
    expect(new Set(stored.map((e) => `${e.writer}-${e.n}`)).size).toBe(19);
    for (const writer of ['a', 'b', 'c']) {
      const ns = stored.filter((e) => e.writer === writer).map((e) => e.n);
      expect(ns).toEqual([...ns].sort((x, y) => Number(x) - Number(y)));
    }
    // And their numbers run from 1 without a gap (the page after number 18 is the last event alone)
    const tail = await eventsAfter(feed, 18, 100);
    expect([tail.afterFound, tail.events.length, tail.lastSeq]).toEqual([true, 1, 19]);
    // And their ids sort in the feed's order
    const ids = stored.map((e) => e.id);
    expect([...ids].sort()).toEqual(ids);
  });

  it("gives ids that sort in the feed's order, even when a later change's clock read earlier", async () => {
    // Given a feed, and changes whose clocks go backwards as they commit (changes of other partitions)
    const feed = { accountId: `acct_${randomUUID()}` };
    const now = Date.now();
    const backwards = events('late', 6).map((e, i) => ({ ...e, createdMs: now - i * 7 }));
    // When they are appended one at a time, then as a burst, then one more much earlier still
    for (const e of backwards.slice(0, 2)) await appendEvents(feed, [e]);
    await appendEvents(feed, backwards.slice(2));
    await appendEvents(feed, [{ ...events('next', 1)[0]!, createdMs: now - 1000 }]);
    // Then the seven ids, sorted as text, are in the feed's order
    const ids = (await all(feed)).map((e) => e.id);
    expect(ids).toHaveLength(7);
    expect([...ids].sort()).toEqual(ids);
    // And a later change's id takes its own time again
    const [later] = await appendEvents(feed, [{ ...events('later', 1)[0]!, createdMs: now + 5000 }]);
    expect(later!.id > ids.at(-1)!).toBe(true);
    expect(later!.id.slice(4, 14)).toBe(encodeTime(now + 5000, 10));
  });
});
