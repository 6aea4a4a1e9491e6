import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { UserEvent } from '../../clients/typescript/index.ts';
import { schemaValidator } from './openapi.ts';

/**
 * A loopback WebSocket server that keeps the realtime contract for one
 * user's events (docs/realtime.md, `?after=` in docs/openapi.yaml), with
 * the failures a client must survive at hand: connections dropped
 * mid-stream, refused upgrades, a replay that overlaps what was sent, pings
 * left unanswered, cursors past retention. The client helper's unit tests
 * run against it; the real server's own tests are the end-to-end ones.
 */
export interface Handshake {
  at: number;
  /** The `after` of the URL, or null. */
  after: string | null;
  protocols: string[];
  /** The status a refused upgrade answered; undefined when it was accepted. */
  refused?: number;
  /** Whether the connection went live (its replay, if any, sent). */
  live?: boolean;
}

export interface FeedServer {
  url: string;
  token: string;
  /** Every upgrade asked for, in order. */
  handshakes: Handshake[];
  /** Every event committed, in order. */
  log: UserEvent[];
  pings: number;
  /** Commits `count` events, sent at once to the open connections. */
  publish(count?: number): UserEvent[];
  /** The open connections each send `frames` more frames, then lose their TCP connection without a close. */
  dropAfter(frames: number): void;
  /** Refuses the next `count` upgrades with this status. */
  refuseNext(count: number, status?: number): void;
  /** Cursors at or before this event are past retention. */
  expireThrough(id: string): void;
  /** A replay starts this many events before `after` (a server bug the client must absorb). */
  overlap: number;
  ignorePings: boolean;
  open(): number;
  close(): Promise<void>;
}

const validEvent = schemaValidator('UserEvent');

/** Event ids sort like the service's (`evt_` and 26 Crockford base32 digits, in commit order). */
const eventId = (n: number) => `evt_${String(n).padStart(26, '0')}`;

function conversationUpdated(n: number, user: string): UserEvent {
  const event: UserEvent = {
    id: eventId(n),
    type: 'conversation.updated',
    created_at: 1_735_689_600 + n,
    user,
    data: {
      object: {
        id: 'conv_01JD5R8Z9Q4W3X2V1T0S9R8Q7P',
        contact_id: 'ct_01JD5R7X1Y2Z3A4B5C6D7E8F9F',
        group_id: null,
        pinned_message_id: null,
        is_pinned: false,
        is_muted: false,
        last_active_at: 1_735_689_600 + n,
        last_opened_at: null,
        created_at: 1_735_689_600,
        archived_at: null,
        unread_count: n,
      },
    },
  };
  // The fake holds itself to the document, so a test passing here passes on the contract's objects.
  if (!validEvent(event)) throw new Error(`not a UserEvent: ${JSON.stringify(validEvent.errors)}`);
  return event;
}

function refuse(socket: Duplex, status: number) {
  // The client may reset the connection once it has read the status: that is no failure of the test.
  socket.on('error', () => undefined);
  socket.end(`HTTP/1.1 ${status} Refused\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
}

const refusal = (code: 'cursor_expired' | 'invalid_cursor') =>
  JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', code, message: `cursor refused: ${code}`, param: 'after' } });

export async function startFeedServer(token = `tok_${'A'.repeat(43)}`, user = 'ct_01JD5R7X1Y2Z3A4B5C6D7E8F9G'): Promise<FeedServer> {
  const http = createServer();
  const wss = new WebSocketServer({ noServer: true, handleProtocols: () => 'bearer' });
  const live = new Set<{ ws: WebSocket; budget: number }>();
  let refusals: { count: number; status: number } = { count: 0, status: 503 };
  let expiredThrough = -1;

  const feed: FeedServer = {
    url: '',
    token,
    handshakes: [],
    log: [],
    pings: 0,
    overlap: 0,
    ignorePings: false,
    publish(count = 1) {
      const events = Array.from({ length: count }, (_, i) => conversationUpdated(feed.log.length + i, user));
      feed.log.push(...events);
      for (const connection of live) for (const event of events) send(connection, JSON.stringify(event));
      return events;
    },
    dropAfter(frames) {
      for (const connection of live) connection.budget = frames;
    },
    refuseNext(count, status = 503) {
      refusals = { count, status };
    },
    expireThrough(id) {
      expiredThrough = feed.log.findIndex((e) => e.id === id);
    },
    open: () => [...live].filter(({ ws }) => ws.readyState === ws.OPEN).length,
    close: () =>
      new Promise<void>((resolve) => {
        for (const { ws } of live) ws.terminate();
        wss.close();
        http.close(() => resolve());
      }),
  };

  function send(connection: { ws: WebSocket; budget: number }, frame: string) {
    if (connection.budget === 0 || connection.ws.readyState !== connection.ws.OPEN) return;
    connection.ws.send(frame);
    connection.budget -= 1;
    // Like a phone going into a tunnel: the TCP connection is gone, no close frame is sent.
    if (connection.budget === 0) setImmediate(() => connection.ws.terminate());
  }

  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const protocols = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
    const handshake: Handshake = { at: performance.now(), after: url.searchParams.get('after'), protocols };
    feed.handshakes.push(handshake);
    if (refusals.count > 0) {
      refusals.count -= 1;
      handshake.refused = refusals.status;
      return refuse(socket, refusals.status);
    }
    if (protocols[0] !== 'bearer' || protocols[1] !== token) {
      handshake.refused = 401;
      return refuse(socket, 401);
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const connection = { ws, budget: -1 };
      ws.on('message', (data) => {
        if (String(data) !== JSON.stringify({ action: 'ping' })) return;
        feed.pings += 1;
        if (!feed.ignorePings) ws.send(JSON.stringify({ type: 'pong' }));
      });
      ws.on('close', () => live.delete(connection));
      const after = handshake.after;
      if (after !== null) {
        const index = feed.log.findIndex((e) => e.id === after);
        if (index < 0 || index <= expiredThrough) {
          ws.send(refusal(index < 0 ? 'invalid_cursor' : 'cursor_expired'));
          ws.close();
          return;
        }
        for (const event of feed.log.slice(Math.max(0, index + 1 - feed.overlap))) send(connection, JSON.stringify(event));
      }
      live.add(connection);
      handshake.live = true;
    });
  });

  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  feed.url = `ws://127.0.0.1:${(http.address() as AddressInfo).port}/`;
  return feed;
}
