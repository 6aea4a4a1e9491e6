import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feedPartition } from '#shared/data/events';
import { feedEventId } from '#shared/data/event-ids';
import { issueToken } from '#shared/data/tokens';
import { eventually } from '../steps/eventually.ts';
import { aTenant, anotherUserOf, type Tenant } from '../steps/given.ts';
import { realtimeStack, type Frame as Event } from '../steps/sockets.ts';
import type { ApiClient } from '../steps/when.ts';

/**
 * The events feed (GET /v1/events) and the WebSocket's resume
 * (`?after=<event id>`): one stream to the client, numbered without a gap,
 * so paging and reconnecting lose nothing and repeat nothing, even while
 * new events are committed.
 */
let stack: Awaited<ReturnType<typeof realtimeStack>>;
let messaging: ApiClient;

beforeAll(async () => {
  stack = await realtimeStack();
  messaging = stack.messaging;
});

afterAll(() => stack?.stop());

/** A browser's socket (the token in the subprotocols), resuming after `after` when given. */
const connect = (token: string, after?: string) => stack.connect(token, { via: 'protocol', after });

/** What a socket opened with a bad cursor is told before the server closes it (a browser cannot read a refused upgrade's status). */
async function cursorRefusal(token: string, after: string): Promise<{ code?: string; param?: string; closed: boolean }> {
  const socket = await connect(token, after);
  await eventually(async () => socket.ws.readyState === socket.ws.CLOSED, { what: 'the server closing the socket', timeoutMs: 15_000 });
  const [frame] = socket.frames;
  return { code: frame?.error?.code, param: frame?.error?.param, closed: true };
}

const send = (t: Tenant, conversationId: string, message: string) =>
  messaging.call('POST', '/v1/messages', { token: t.token, form: { conversation_id: conversationId, message } });

const conversationWithBob = async (t: Tenant) =>
  (await messaging.call('POST', '/v1/conversations', { token: t.token, form: { contact_id: t.contactIds.bob! } })).body.id as string;

/** Every event of the caller's feed after `after`, page by page. */
async function readFeed(token: string, after?: string, limit = 100): Promise<Event[]> {
  const all: Event[] = [];
  for (let pages = 0; pages < 200; pages++) {
    const cursor = all.at(-1)?.id ?? after;
    const res = await messaging.call('GET', `/v1/events?limit=${limit}${cursor ? `&after=${cursor}` : ''}`, { token });
    expect(res.status).toBe(200);
    all.push(...(res.body.data as Event[]));
    if (!res.body.has_more) return all;
  }
  throw new Error('feed did not end within 200 pages');
}

const createdIds = (events: Event[]) => events.filter((e) => e.type === 'message.created').map((e) => e.data.object.id);

describe('events feed', () => {
  it("keeps one conversation's events in commit order when sends race: bob's unread count only climbs", async () => {
    // Given alice and dave sending to bob at once, rounds of 8 sends (each send's transaction adds 1 to his count)
    const t = await aTenant();
    const conv = await conversationWithBob(t);
    const dave = { ...t, token: (await anotherUserOf(t)).token };
    const daves = await conversationWithBob(dave);
    for (let round = 0; round < 4; round++) {
      const sends = Array.from({ length: 8 }, (_, i) => (i % 2 ? send(dave, daves, `d${round}.${i}`) : send(t, conv, `a${round}.${i}`)));
      expect((await Promise.all(sends)).map((r) => r.status)).toEqual(Array(8).fill(201));
    }
    // When bob reads his feed, once it holds every message
    const feed = await eventually(
      async () => {
        const events = await readFeed(t.token2);
        return createdIds(events).length === 32 && events;
      },
      { what: "bob's feed holding the 32 messages", timeoutMs: 30_000 },
    );
    // Then each of his conversations' updates carries a count above the one before: the stream's order, the commits'
    for (const mine of new Set(feed.filter((e) => e.type === 'conversation.updated').map((e) => e.data.object.id))) {
      const counts = feed
        .filter((e) => e.type === 'conversation.updated' && e.data.object.id === mine)
        .map((e) => (e.data.object as { unread_count: number }).unread_count);
      expect(counts).toEqual([...counts].sort((a, b) => a - b));
      expect(counts.at(-1)).toBe(16);
    }
  });

  it("lists a user's events oldest first, the very objects their socket got", async () => {
    // Given bob connected, and alice sending him three messages
    const t = await aTenant();
    const bob = await connect(t.token2);
    const conv = await conversationWithBob(t);
    const sent: string[] = [];
    for (const text of ['one', 'two', 'three']) sent.push((await send(t, conv, text)).body.id);
    await eventually(async () => createdIds(bob.frames).length === 3, {
      what: "bob's socket getting the three messages",
      timeoutMs: 15_000,
    });
    // When bob reads his feed
    const feed = await readFeed(t.token2);
    // Then it holds his three message.created, in the order they were sent, each the same object as its frame
    expect(createdIds(feed)).toEqual(sent);
    for (const frame of bob.frames) expect(feed.find((e) => e.id === frame.id)).toEqual(frame);
    // And only his own views: every event names bob
    expect(new Set(feed.map((e) => e.user))).toEqual(new Set([t.contactIds.bob]));
  });

  it('pages with after, with nothing missing and nothing twice while events are committed', async () => {
    // Given alice sending bob 30 messages, one after another
    const t = await aTenant();
    const conv = await conversationWithBob(t);
    const sent: string[] = [];
    const sending = (async () => {
      for (let i = 0; i < 30; i++) sent.push((await send(t, conv, `m${i}`)).body.id);
    })();
    // When bob pages through his feed with 3 events a page, from the start, all the while
    const seen: Event[] = [];
    let cursor: string | undefined;
    let done = false;
    void sending.then(() => (done = true));
    for (let pages = 0; pages < 500; pages++) {
      const res = await messaging.call('GET', `/v1/events?limit=3${cursor ? `&after=${cursor}` : ''}`, { token: t.token2 });
      expect(res.status).toBe(200);
      seen.push(...(res.body.data as Event[]));
      cursor = seen.at(-1)?.id ?? cursor;
      if (done && createdIds(seen).length === 30) break;
      if (!res.body.has_more) await new Promise((r) => setTimeout(r, 50));
    }
    await sending;
    // Then he saw every message, in the order sent, and no event twice
    expect(createdIds(seen)).toEqual(sent);
    expect(new Set(seen.map((e) => e.id)).size).toBe(seen.length);
    // And a fresh read from the start is what he paged through
    expect((await readFeed(t.token2)).slice(0, seen.length)).toEqual(seen);
  }, 90_000);

  it("lists the account's events with its secret key, every view and the sender's message", async () => {
    // Given alice sending bob a message
    const t = await aTenant();
    const conv = await conversationWithBob(t);
    const sent = (await send(t, conv, 'for the backend')).body;
    // When the account's backend reads the account's feed
    const feed = await eventually(
      async () => {
        const events = await readFeed(t.secretKey);
        return createdIds(events).includes(sent.id) && events.some((e) => e.type === 'conversation.created' && e.user === t.contactIds.bob)
          ? events
          : undefined;
      },
      { what: "the three messages and the conversations in the account's feed", timeoutMs: 15_000 },
    );
    // Then the message appears once, in its sender's view, and each participant's conversation
    const created = feed.filter((e) => e.type === 'message.created');
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({ user: t.contactIds.alice, data: { object: { id: sent.id, conversation_id: conv } } });
    expect(feed.filter((e) => e.type === 'conversation.created').map((e) => e.user)).toEqual(
      expect.arrayContaining([t.contactIds.alice, t.contactIds.bob]),
    );
    // And a user's feed is not the account's: bob's cursor means nothing there
    const bobs = await eventually(async () => (await readFeed(t.token2)).at(-1), { what: "an event in bob's feed", timeoutMs: 15_000 });
    const res = await messaging.call('GET', `/v1/events?after=${bobs.id}`, { token: t.secretKey });
    expect([res.status, res.body.error?.param]).toEqual([400, 'after']);
  });

  it('answers 400 for a cursor of no event of the feed, 410 for one past the retention', async () => {
    const t = await aTenant();
    const partition = feedPartition({ accountId: t.accountId, contactId: t.contactIds.bob! });
    const cases: [string, number, string][] = [
      ['nonsense', 400, 'invalid_cursor'],
      ['evt_01JD5R9A2B3C4D5E6F7G8H9J0K', 400, 'invalid_cursor'],
      // Of bob's feed in form, but a number his feed has not reached
      [feedEventId(partition, 1_000_000, Date.now()), 400, 'invalid_cursor'],
      // Of bob's feed, 31 days old
      [feedEventId(partition, 1, Date.now() - 31 * 86_400_000), 410, 'cursor_expired'],
    ];
    for (const [after, status, code] of cases) {
      const res = await messaging.call('GET', `/v1/events?after=${after}`, { token: t.token2 });
      expect({ after, status: res.status, code: res.body.error?.code, param: res.body.error?.param }).toEqual({
        after,
        status,
        code,
        param: 'after',
      });
    }
    // And the socket, opened with the same cursors, is told the same in an error frame, then closed by the server
    expect(await cursorRefusal(t.token2, cases[2]![0])).toEqual({ code: 'invalid_cursor', param: 'after', closed: true });
    expect(await cursorRefusal(t.token2, cases[3]![0])).toEqual({ code: 'cursor_expired', param: 'after', closed: true });

    // Given an event of bob's feed, and its id with the time part changed (the number exists; that id does not)
    await send(t, await conversationWithBob(t), 'for a real event');
    const real = await eventually(async () => (await readFeed(t.token2))[0], { what: "bob's first event" });
    const forged = feedEventId(partition, 1, Date.now() - 86_400_000);
    expect(real.id).not.toBe(forged);
    // Then the real id pages on, the forged one is refused as naming no event, on the feed and on the socket
    expect((await messaging.call('GET', `/v1/events?after=${real.id}`, { token: t.token2 })).status).toBe(200);
    const refused = await messaging.call('GET', `/v1/events?after=${forged}`, { token: t.token2 });
    expect([refused.status, refused.body.error?.code]).toEqual([400, 'invalid_cursor']);
    expect(await cursorRefusal(t.token2, forged)).toEqual({ code: 'invalid_cursor', param: 'after', closed: true });
  });
});

describe('WebSocket resume', () => {
  it('replays what a reconnecting client missed (40 messages, 5 edits, a delete), then goes on live, each once and in order', async () => {
    // Given bob connected, carol connected, and alice's first message delivered to bob's socket
    const t = await aTenant();
    const conv = await conversationWithBob(t);
    const first = await connect(t.token2);
    const carol = await connect(await issueToken({ accountId: t.accountId, contactId: t.contactIds.carol! }));
    const sent: string[] = [(await send(t, conv, 'before the tunnel')).body.id];
    await eventually(async () => createdIds(first.frames).length === 1, { what: "the first message on bob's socket", timeoutMs: 15_000 });
    const last = first.frames.at(-1)!;
    // When his socket drops, and alice sends 40 messages, edits 5 of them and deletes one
    await first.close();
    for (let i = 0; i < 40; i++) sent.push((await send(t, conv, `in the tunnel ${i}`)).body.id);
    for (const id of sent.slice(1, 6))
      await messaging.call('PUT', `/v1/messages/${id}`, { token: t.token, form: { message: `edited ${id}` } });
    await messaging.call('DELETE', `/v1/messages/${sent[6]}`, { token: t.token });
    // Then the feed, paged 7 at a time from his last event, holds exactly those: 40 created, 5 updated, 1 deleted, in order
    const missed = await eventually(
      async () => {
        const events = await readFeed(t.token2, last.id, 7);
        const deleted = events.filter((e) => e.type === 'message.deleted').length;
        return createdIds(events).length === 40 && deleted === 1 ? events : undefined;
      },
      { what: "the 40 messages, 5 edits and the delete in bob's feed", timeoutMs: 30_000 },
    );
    expect(createdIds(missed)).toEqual(sent.slice(1));
    expect(missed.filter((e) => e.type === 'message.updated').map((e) => e.data.object.message)).toEqual(
      sent.slice(1, 6).map((id) => `edited ${id}`),
    );
    expect(missed.filter((e) => e.type === 'message.deleted').map((e) => e.data.object.id)).toEqual([sent[6]]);
    // When he reconnects with ?after= his last event, and alice sends three more while the replay is under way
    const again = await connect(t.token2, last.id);
    for (let i = 0; i < 3; i++) sent.push((await send(t, conv, `after ${i}`)).body.id);
    // Then his new socket gets the missed events, in the feed's order, then the live ones, each once
    await eventually(async () => createdIds(again.frames).length >= 43, {
      what: 'the replayed and live messages on the new socket',
      timeoutMs: 30_000,
    });
    // (sentinel: one more message, so anything sent twice would have arrived before it)
    sent.push((await send(t, conv, 'sentinel')).body.id);
    await eventually(async () => createdIds(again.frames).includes(sent.at(-1)), {
      what: 'the sentinel message on the new socket',
      timeoutMs: 15_000,
    });
    const whole = await readFeed(t.token2, last.id);
    await eventually(async () => again.frames.length >= whole.length, {
      what: 'every event of the feed after his last on the new socket',
      timeoutMs: 15_000,
    });
    expect(again.frames.slice(0, missed.length)).toEqual(missed);
    expect(again.frames).toEqual((await readFeed(t.token2, last.id)).slice(0, again.frames.length));
    expect(createdIds(again.frames)).toEqual(sent.slice(1));
    expect(new Set(again.frames.map((e) => e.id)).size).toBe(again.frames.length);
    // And carol, in the same account, heard none of it; nor does another account's backend read it
    expect(carol.frames.filter((e) => e.data.object.conversation_id === conv || sent.includes(e.data.object.id as string))).toEqual([]);
    const other = await aTenant();
    const theirs = await readFeed(other.secretKey);
    expect(theirs.filter((e) => sent.includes(e.data.object.id as string))).toEqual([]);
  }, 120_000);
});
