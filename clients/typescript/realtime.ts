import { backoffDelay, DEFAULT_BACKOFF, type BackoffOptions } from './backoff.ts';
import { RealtimeRefusal } from './errors.ts';
import { RecentIds } from './recent-ids.ts';
import type { Schemas, UserEvent } from './types.ts';
import { webSocketClass, type WebSocketConstructor, type WebSocketLike } from './web-socket.ts';

export interface RealtimeOptions {
  /** The realtime WebSocket URL (`REALTIME_URL` locally, the stack's `RealtimeUrl` deployed). */
  url: string;
  /** The user's token. */
  token: string;
  /** The id of the last event the app already has (saved from `lastEventId`, or from the feed): resume after it. */
  after?: string;
  /** Each event, once, in the order the server sent them. */
  onEvent: (event: UserEvent) => void;
  /** A connection that failed or dropped (it is retried), a frame that could not be read, an `onEvent` that threw. */
  onError?: (error: unknown) => void;
  /**
   * The server could not resume from the cursor (older than the feed keeps,
   * or not this user's): the helper went on live without it, and the app
   * reads the state it shows again. Called once the live connection is
   * open, so nothing committed after that read can be missed.
   */
  onReset?: () => void;
  /** The WebSocket class to use; by default the runtime's (browsers, Node 22 and later). */
  WebSocket?: WebSocketConstructor;
  /** How often to ping (default 5 minutes: API Gateway closes a connection idle for 10). */
  pingIntervalMs?: number;
  /** A ping unanswered this long means the connection is dead though not closed (default 20 seconds). */
  pongTimeoutMs?: number;
  backoff?: BackoffOptions;
  /** How many recent event ids to remember against a repeat (default 1,000). */
  rememberIds?: number;
}

export interface RealtimeConnection {
  /** The id of the last event delivered (or the `after` it started from): where a restart of the app resumes. */
  readonly lastEventId: string | undefined;
  /** Closes the connection and stops reconnecting. */
  close(): void;
}

type Frame = Schemas['RealtimeFrame'];
type Timer = ReturnType<typeof setTimeout>;

const OPEN = 1;
const PING = JSON.stringify({ action: 'ping' });
/** The refusals of `?after=` that no retry with the same cursor can cure. */
const REFUSED_CURSOR = new Set(['cursor_expired', 'invalid_cursor']);

/**
 * Keeps one user's realtime connection: authenticates with the subprotocol
 * pair `bearer`, `<token>` (the one form browsers can send), reconnects with
 * backoff after any failure, and resumes with `?after=<last event id>` so
 * that, with the server replaying what was committed meanwhile, the app sees
 * every event once and in order.
 */
export function connectRealtime(options: RealtimeOptions): RealtimeConnection {
  const WebSocketClass = webSocketClass(options.WebSocket);
  const backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
  const pingEvery = options.pingIntervalMs ?? 5 * 60_000;
  const pongWithin = options.pongTimeoutMs ?? 20_000;
  // The server promises no repeat at the seam; this guard keeps the promise to the app even if a replay overlaps.
  const delivered = new RecentIds(options.rememberIds ?? 1_000);
  if (options.after !== undefined) delivered.add(options.after);

  let lastEventId = options.after;
  let socket: WebSocketLike | undefined;
  let stopped = false;
  let attempt = 0;
  let resetPending = false;
  let retry: Timer | undefined;
  let pinger: ReturnType<typeof setInterval> | undefined;
  let pongDue: Timer | undefined;
  let healthy: Timer | undefined;

  const report = (error: unknown) => {
    try {
      options.onError?.(error);
    } catch {
      // An app's error handler that throws must not stop the connection it reports on.
    }
  };

  function connect() {
    retry = undefined;
    const url = new URL(options.url);
    if (lastEventId !== undefined) url.searchParams.set('after', lastEventId);
    const ws = new WebSocketClass(url.toString(), ['bearer', options.token]);
    socket = ws;
    // A socket given up (closed by us, replaced) may still fire events: only the current one's count.
    ws.addEventListener('open', () => ws === socket && opened(ws));
    ws.addEventListener('message', (event) => ws === socket && received(ws, (event as { data?: unknown }).data));
    ws.addEventListener('error', (event) => ws === socket && lost(ws, new Error('the realtime connection failed', { cause: event })));
    ws.addEventListener('close', (event) => {
      const { code, reason } = event as { code?: number; reason?: string };
      if (ws === socket) lost(ws, new Error(`the realtime connection closed (${code ?? 'no code'}${reason ? `: ${reason}` : ''})`));
    });
  }

  function opened(ws: WebSocketLike) {
    pinger = setInterval(() => ping(ws), pingEvery);
    healthy = setTimeout(() => (attempt = 0), backoff.healthyAfterMs);
    if (!resetPending) return;
    resetPending = false;
    try {
      options.onReset?.();
    } catch (error) {
      report(error);
    }
  }

  function ping(ws: WebSocketLike) {
    if (ws.readyState !== OPEN) return;
    ws.send(PING);
    pongDue ??= setTimeout(() => lost(ws, new Error(`no answer to a ping within ${pongWithin} ms`)), pongWithin);
  }

  function received(ws: WebSocketLike, data: unknown) {
    // Any frame shows the connection is alive, not only the pong.
    clearTimeout(pongDue);
    pongDue = undefined;
    let frame: Frame;
    try {
      frame = JSON.parse(typeof data === 'string' ? data : String(data)) as Frame;
    } catch (error) {
      report(error);
      return;
    }
    if (frame.type === 'pong') return;
    if (frame.type === 'error' && 'error' in frame) return refused(ws, frame.error);
    if ('id' in frame && typeof frame.id === 'string') deliver(frame);
  }

  function deliver(event: UserEvent) {
    if (delivered.has(event.id)) return;
    delivered.add(event.id);
    lastEventId = event.id;
    try {
      options.onEvent(event);
    } catch (error) {
      report(error);
    }
  }

  function refused(ws: WebSocketLike, error: Extract<Frame, { type: 'error' }>['error']) {
    const refusal = new RealtimeRefusal(error);
    report(refusal);
    // Without a cursor there is nothing to start over from: another refusal is the server's to explain, not a loop of ours.
    if (!REFUSED_CURSOR.has(error.code) || lastEventId === undefined) return;
    lastEventId = undefined;
    resetPending = true;
    retire(ws);
    attempt = 0;
    connect();
  }

  function lost(ws: WebSocketLike, error: Error) {
    retire(ws);
    report(error);
    if (stopped) return;
    retry = setTimeout(connect, backoffDelay(attempt++, backoff));
  }

  function retire(ws: WebSocketLike) {
    if (socket === ws) socket = undefined;
    clearInterval(pinger);
    clearTimeout(pongDue);
    clearTimeout(healthy);
    pinger = pongDue = healthy = undefined;
    try {
      ws.close();
    } catch {
      // Closing a socket that never opened may throw in some runtimes; it is dropped either way.
    }
  }

  connect();
  return {
    get lastEventId() {
      return lastEventId;
    },
    close() {
      stopped = true;
      clearTimeout(retry);
      if (socket) retire(socket);
    },
  };
}
