import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feedPartition } from '#shared/data/events';
import { feedEventId } from '#shared/data/event-ids';
import { startRealtimeServer, type RunningRealtime } from '../../scripts/local/realtime-server.ts';
import { startStreams } from '../../scripts/local/runtime.ts';
import { eventually } from '../steps/email-env.ts';
import { aTenant, type Tenant } from '../steps/given.ts';
import { apiClient, type ApiClient } from '../steps/when.ts';

/**
 * The events feed (GET /v1/events) and the WebSocket's resume
 * (`?after=<event id>`): one stream to the client, numbered without a gap,
 * so paging and reconnecting lose nothing and repeat nothing, even while
 * new events are committed.
 */
interface Event {
  id: string;
  type: string;
  created_at: number;
  user?: string;
  data: { object: Record<string, unknown> };
}

interface Socket {
  ws: WebSocket;
  frames: Event[];
  close: () => Promise<void>;
}

let server: RunningRealtime;
let streams: { stop: () => Promise<void> };
let messaging: ApiClient;
const opened: Socket[] = [];

beforeAll(async () => {
  server = await startRealtimeServer(0);
  process.env.REALTIME_ENDPOINT = server.callbackUrl;
  streams = startStreams(process.env as Record<string, string>, { from: 'latest' });
  messaging = await apiClient('messaging', 'http');
});

afterAll(async () => {
  for (const s of opened) s.ws.terminate();
  await streams?.stop();
  await server?.close();
  await messaging?.close();
});

function connect(token: string, after?: string): Promise<Socket> {
  const url = after === undefined ? server.url : `${server.url}?after=${encodeURIComponent(after)}`;
  const ws = new WebSocket(url, ['bearer', token]);
  const socket: Socket = {
    ws,
    frames: [],
    close: () =>
      new Promise<void>((resolve) => (ws.readyState === ws.CLOSED ? resolve() : (ws.once('close', () => resolve()), ws.close()))),
  };
  ws.on('message', (data) => socket.frames.push(JSON.parse(data.toString()) as Event));
  opened.push(socket);
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(socket));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`refused ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

function refusal(token: string, after: string): Promise<number> {
  const ws = new WebSocket(`${server.url}?after=${encodeURIComponent(after)}`, ['bearer', token]);
  return new Promise((resolve, reject) => {
    ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.once('open', () => reject(new Error('upgrade accepted')));
  });
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
  it("lists a user's events oldest first, the very objects their socket got", async () => {
    // Given bob connected, and alice sending him three messages
    const t = await aTenant();
    const bob = await connect(t.token2);
    const conv = await conversationWithBob(t);
    const sent: string[] = [];
    for (const text of ['one', 'two', 'three']) sent.push((await send(t, conv, text)).body.id);
    await eventually(async () => createdIds(bob.frames).length === 3, 15_000);
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
    const feed = await eventually(async () => {
      const events = await readFeed(t.secretKey);
      return createdIds(events).includes(sent.id) && events.some((e) => e.type === 'conversation.created' && e.user === t.contactIds.bob)
        ? events
        : undefined;
    }, 15_000);
    // Then the message appears once, in its sender's view, and each participant's conversation
    const created = feed.filter((e) => e.type === 'message.created');
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({ user: t.contactIds.alice, data: { object: { id: sent.id, conversation_id: conv } } });
    expect(feed.filter((e) => e.type === 'conversation.created').map((e) => e.user)).toEqual(
      expect.arrayContaining([t.contactIds.alice, t.contactIds.bob]),
    );
    // And a user's feed is not the account's: bob's cursor means nothing there
    const bobs = await eventually(async () => (await readFeed(t.token2)).at(-1), 15_000);
    const res = await messaging.call('GET', `/v1/events?after=${bobs.id}`, { token: t.secretKey });
    expect([res.status, res.body.error?.param]).toEqual([400, 'after']);
  });

  it('answers 400 for a cursor of no event of the feed, 410 for one past the retention', async () => {
    const t = await aTenant();
    const partition = feedPartition({ accountId: t.accountId, contactId: t.contactIds.bob! });
    const cases: [string, number, string][] = [
      ['nonsense', 400, 'parameter_invalid'],
      ['evt_01JD5R9A2B3C4D5E6F7G8H9J0K', 400, 'parameter_invalid'],
      // Of bob's feed in form, but a number his feed has not reached
      [feedEventId(partition, 1_000_000, Date.now()), 400, 'parameter_invalid'],
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
    // And the socket refuses the same cursors the same way
    expect(await refusal(t.token2, cases[2]![0])).toBe(400);
    expect(await refusal(t.token2, cases[3]![0])).toBe(410);
  });
});

describe('WebSocket resume', () => {
  it('replays what a reconnecting client missed, then goes on live, with no gap and no duplicate', async () => {
    // Given bob connected and alice's first message delivered to his socket
    const t = await aTenant();
    const conv = await conversationWithBob(t);
    const first = await connect(t.token2);
    const sent: string[] = [(await send(t, conv, 'before the tunnel')).body.id];
    await eventually(async () => createdIds(first.frames).length === 1, 15_000);
    const last = first.frames.at(-1)!;
    // When his socket drops, alice sends five more and edits the first, and he reconnects with ?after= his last event
    await first.close();
    for (let i = 0; i < 5; i++) sent.push((await send(t, conv, `in the tunnel ${i}`)).body.id);
    await messaging.call('PUT', `/v1/messages/${sent[0]}`, { token: t.token, form: { message: 'edited in the tunnel' } });
    const again = await connect(t.token2, last.id);
    // And alice sends three more while the replay is under way
    for (let i = 0; i < 3; i++) sent.push((await send(t, conv, `after ${i}`)).body.id);
    // Then his new socket gets every message after his last, in order, and the edit, each once
    await eventually(async () => createdIds(again.frames).length >= 8, 20_000);
    const feed = await eventually(async () => {
      const events = await readFeed(t.token2, last.id);
      return createdIds(events).length === 8 ? events : undefined;
    }, 15_000);
    await eventually(async () => again.frames.length >= feed.length, 15_000);
    // (sentinel: one more message, so anything sent twice would have arrived before it)
    sent.push((await send(t, conv, 'sentinel')).body.id);
    await eventually(async () => createdIds(again.frames).includes(sent.at(-1)), 15_000);
    expect(createdIds(again.frames)).toEqual(sent.slice(1));
    expect(again.frames.some((e) => e.type === 'message.updated' && e.data.object.message === 'edited in the tunnel')).toBe(true);
    expect(new Set(again.frames.map((e) => e.id)).size).toBe(again.frames.length);
    // And the socket and the feed are one stream: the frames are the feed's events after his last, in the feed's order
    const whole = await readFeed(t.token2, last.id);
    expect(again.frames).toEqual(whole);
  }, 90_000);
});
