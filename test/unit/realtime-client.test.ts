import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { connectRealtime, type RealtimeConnection, type RealtimeOptions, type UserEvent } from '../../clients/typescript/index.ts';
import { startFeedServer, type FeedServer } from '../steps/realtime-feed-server.ts';

/**
 * The client's realtime helper (clients/typescript/realtime.ts) over real
 * loopback sockets, against a server that keeps the resume contract and
 * fails in the ways networks do. Node 20 has no global WebSocket, so the
 * `ws` package's is passed in, as an app on that Node would.
 */
const running: { server: FeedServer; client?: RealtimeConnection }[] = [];

afterEach(async () => {
  for (const { server, client } of running.splice(0)) {
    client?.close();
    await server.close();
  }
});

async function until<T>(check: () => T | undefined | false, timeoutMs = 5_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function aFeedServer() {
  const server = await startFeedServer();
  running.push({ server });
  return server;
}

/** The helper connected to `server`, recording what it hands the app. */
function aClient(server: FeedServer, options: Partial<RealtimeOptions> = {}) {
  const seen: UserEvent[] = [];
  const errors: unknown[] = [];
  let resets = 0;
  const client = connectRealtime({
    url: server.url,
    token: server.token,
    WebSocket,
    onEvent: (event) => seen.push(event),
    onError: (error) => errors.push(error),
    onReset: () => (resets += 1),
    backoff: { initialMs: 10, maxMs: 40, healthyAfterMs: 1_000 },
    ...options,
  });
  running.at(-1)!.client = client;
  return { client, seen, errors, resets: () => resets, ids: () => seen.map((e) => e.id) };
}

const ids = (events: UserEvent[]) => events.map((e) => e.id);
const accepted = (server: FeedServer) => server.handshakes.filter((h) => h.refused === undefined);
const liveConnections = (server: FeedServer) => server.handshakes.filter((h) => h.live).length;

describe('connectRealtime', () => {
  it('authenticates with the bearer subprotocol pair and delivers live events in order', async () => {
    // Given a server and the helper connected to it
    const server = await aFeedServer();
    const app = aClient(server);
    await until(() => server.open() === 1);
    // When events are committed
    const events = server.publish(5);
    // Then the app gets each, in order, and lastEventId is the last
    await until(() => app.seen.length === 5);
    expect(app.ids()).toEqual(ids(events));
    expect(app.client.lastEventId).toBe(events[4]!.id);
    expect(server.handshakes).toEqual([expect.objectContaining({ protocols: ['bearer', server.token], after: null })]);
  });

  it('reconnects after a drop mid-stream with after=<last delivered id>: nothing missed, nothing twice, then live', async () => {
    // Given a connected app that has received 3 events
    const server = await aFeedServer();
    const app = aClient(server);
    await until(() => server.open() === 1);
    const before = server.publish(3);
    await until(() => app.seen.length === 3);
    // When its connection is lost two frames into a burst of 10, and 10 more are committed while it is away
    server.dropAfter(2);
    const burst = server.publish(10);
    const meanwhile = server.publish(10);
    // Then it reconnects after the last event it delivered, and gets the rest of the burst and what it missed
    await until(() => app.seen.length === 23);
    expect(accepted(server).map((h) => h.after)).toEqual([null, burst[1]!.id]);
    // And live events follow the replay
    const after = server.publish(4);
    await until(() => app.seen.length === 27);
    expect(app.ids()).toEqual(ids([...before, ...burst, ...meanwhile, ...after]));
    expect(app.client.lastEventId).toBe(after[3]!.id);
  });

  it('survives many drops in a row, each resumed where it stopped', async () => {
    // Given an app on a connection that keeps dropping after a few frames of a steady stream
    const server = await aFeedServer();
    const app = aClient(server);
    for (let round = 0; round < 6; round++) {
      await until(() => liveConnections(server) === round + 1 && server.open() === 1);
      server.dropAfter(3);
      server.publish(5);
    }
    // Then every event arrives exactly once, in commit order, over seven connections (six dropped)
    await until(() => app.seen.length === server.log.length);
    await pause(50);
    expect(app.ids()).toEqual(ids(server.log));
    expect(liveConnections(server)).toBe(7);
  });

  it('starts after the id it is given, and drops what a replay sends again', async () => {
    // Given 6 committed events, an app that has the first 3, and a server whose replay starts one early
    const server = await aFeedServer();
    const events = server.publish(6);
    server.overlap = 1;
    // When the app connects after its third event
    const app = aClient(server, { after: events[2]!.id });
    // Then it gets events 4 to 6, not the third again
    await until(() => app.seen.length === 3);
    await pause(50);
    expect(server.handshakes[0]!.after).toBe(events[2]!.id);
    expect(app.ids()).toEqual(ids(events.slice(3)));
    // And after a drop, a replay overlapping by 3 delivers only what is new
    server.overlap = 3;
    server.dropAfter(1);
    const more = server.publish(3);
    await until(() => app.seen.length === 6);
    await pause(50);
    expect(server.handshakes.map((h) => h.after)).toEqual([events[2]!.id, more[0]!.id]);
    expect(app.ids()).toEqual(ids([...events.slice(3), ...more]));
  });

  it('backs off exponentially with jitter, never beyond maxMs, and starts over after a healthy connection', async () => {
    // Given a server that refuses the next 7 upgrades, and a WebSocket class that notes when each attempt starts
    const server = await aFeedServer();
    server.refuseNext(7);
    const attempts: number[] = [];
    class NotedWebSocket extends WebSocket {
      constructor(url: string, protocols?: string | string[]) {
        super(url, protocols);
        attempts.push(performance.now());
      }
    }
    // When the helper connects, with steps from 50 ms up to 800 ms
    const app = aClient(server, { WebSocket: NotedWebSocket, backoff: { initialMs: 50, maxMs: 800, healthyAfterMs: 100 } });
    await until(() => server.open() === 1, 10_000);
    // Then the waits grow from 25-50 ms to 400-800 ms, never longer: a timer is never early, so the lower bounds are
    // exact, but it may be late on a busy machine, as may the refusal that starts each wait (300 ms of slack)
    const gaps = attempts.slice(1).map((at, i) => at - attempts[i]!);
    expect(gaps).toHaveLength(7);
    expect(Math.max(...gaps)).toBeLessThan(800 + 300);
    expect(gaps[0]).toBeLessThan(50 + 300);
    expect(Math.min(...gaps.slice(-3))).toBeGreaterThanOrEqual(400);
    expect(app.errors.length).toBeGreaterThanOrEqual(7);
    // When the connection stays up past healthyAfterMs and then drops
    await pause(300);
    server.dropAfter(1);
    server.publish();
    const dropped = performance.now();
    // Then the next attempt comes after a first step again (25-50 ms), not one of the longest (400-800 ms)
    await until(() => attempts.length === 9);
    expect(attempts[8]! - dropped).toBeLessThan(400);
    expect(app.seen).toHaveLength(1);
  });

  it('retries a refused token with backoff and reports each failure', async () => {
    // Given a helper holding a token the server does not accept
    const server = await aFeedServer();
    const app = aClient(server, { token: `tok_${'B'.repeat(43)}` });
    // Then each upgrade is refused 401, the app hears of each, and the helper keeps trying
    await until(() => server.handshakes.length >= 3);
    expect(server.handshakes.every((h) => h.refused === 401)).toBe(true);
    expect(app.errors.length).toBeGreaterThanOrEqual(2);
    expect(app.seen).toEqual([]);
  });

  it('on cursor_expired tells the app to re-read once live again, and goes on without after', async () => {
    // Given an app whose last event is past retention
    const server = await aFeedServer();
    const old = server.publish(4);
    server.expireThrough(old[1]!.id);
    // When it connects after it
    const app = aClient(server, { after: old[1]!.id });
    // Then the helper connects again without after, and onReset comes once that connection is open
    await until(() => app.resets() === 1);
    expect(server.handshakes.map((h) => h.after)).toEqual([old[1]!.id, null]);
    expect(server.open()).toBe(1);
    expect(app.client.lastEventId).toBeUndefined();
    expect(app.errors).toEqual([expect.objectContaining({ name: 'RealtimeRefusal', code: 'cursor_expired', param: 'after' })]);
    // And live events arrive, none of the expired ones replayed
    const live = server.publish(2);
    await until(() => app.seen.length === 2);
    expect(app.ids()).toEqual(ids(live));
    expect(app.client.lastEventId).toBe(live[1]!.id);
  });

  it('treats a cursor of no event of this feed the same way, reporting it', async () => {
    const server = await aFeedServer();
    const app = aClient(server, { after: 'evt_01JD5R9A2B3C4D5E6F7G8H9J0K' });
    await until(() => app.resets() === 1);
    expect(server.handshakes.map((h) => h.after)).toEqual(['evt_01JD5R9A2B3C4D5E6F7G8H9J0K', null]);
    expect(app.errors).toEqual([expect.objectContaining({ code: 'invalid_cursor' })]);
  });

  it('pings while connected, and replaces a connection whose pings go unanswered', async () => {
    // Given a helper that pings every 30 ms and gives a ping 300 ms
    const server = await aFeedServer();
    const app = aClient(server, { pingIntervalMs: 30, pongTimeoutMs: 300 });
    await until(() => server.open() === 1);
    // Then it pings, and a connection that answers stays the one connection
    await until(() => server.pings >= 3);
    expect(server.handshakes).toHaveLength(1);
    // When the server stops answering
    server.ignorePings = true;
    // Then the helper gives the connection up and opens another, resuming from where it was
    await until(() => server.handshakes.length === 2);
    expect(app.errors[0]).toEqual(expect.objectContaining({ message: expect.stringMatching(/no answer to a ping/) }));
  });

  it('stops for good on close(), even while waiting to retry', async () => {
    // Given a helper retrying against a server that refuses every upgrade
    const server = await aFeedServer();
    server.refuseNext(1_000);
    const app = aClient(server, { backoff: { initialMs: 20, maxMs: 20 } });
    await until(() => server.handshakes.length >= 2);
    // When the app closes it
    app.client.close();
    const attempts = server.handshakes.length;
    // Then no other attempt is made
    await pause(150);
    expect(server.handshakes.length).toBe(attempts);
  });

  // Node 22 and later, like browsers, have a WebSocket of their own (the CI suite runs on the Lambda runtime's Node, 24).
  it.runIf(typeof (globalThis as { WebSocket?: unknown }).WebSocket === 'function')(
    "uses the runtime's own WebSocket when none is given, resuming after a drop",
    async () => {
      const server = await aFeedServer();
      const app = aClient(server, { WebSocket: undefined });
      await until(() => server.open() === 1);
      server.dropAfter(1);
      const events = server.publish(3);
      await until(() => app.seen.length === 3);
      expect(app.ids()).toEqual(ids(events));
      expect(server.handshakes.map((h) => [h.protocols, h.after])).toEqual([
        [['bearer', server.token], null],
        [['bearer', server.token], events[0]!.id],
      ]);
    },
  );

  it('closes an open connection on close()', async () => {
    const server = await aFeedServer();
    const app = aClient(server);
    await until(() => server.open() === 1);
    app.client.close();
    await until(() => server.open() === 0);
    server.publish();
    await pause(100);
    expect(app.seen).toEqual([]);
    expect(server.handshakes).toHaveLength(1);
  });
});
