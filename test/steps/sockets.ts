import WebSocket from 'ws';
import { startRealtimeServer, type RunningRealtime } from '../../scripts/local/realtime-server.ts';
import { startStreams } from '../../scripts/local/runtime.ts';
import { schemaValidator } from './openapi.ts';
import { apiClient, type ApiClient } from './when.ts';

/** A frame of the realtime API: an event in its user's view, or the answer to a frame the client sent. */
export interface Frame {
  id: string;
  type: string;
  created_at: number;
  user: string;
  data: { object: Record<string, unknown>; reader?: string; read_at?: number };
  error?: { code: string; param?: string };
}

export interface Socket {
  ws: WebSocket;
  frames: Frame[];
  close: () => Promise<void>;
}

const validFrame = schemaValidator('RealtimeFrame');

/**
 * The realtime side of the local service, as a test file needs it: the
 * WebSocket API on loopback, the change stream's consumers reading from
 * now on, and the messaging API over HTTP. Every frame a socket receives is
 * checked against docs/openapi.yaml (RealtimeFrame).
 */
export async function realtimeStack() {
  const server: RunningRealtime = await startRealtimeServer(0);
  process.env.REALTIME_ENDPOINT = server.callbackUrl;
  const streams = startStreams(process.env as Record<string, string>, { from: 'latest' });
  const messaging: ApiClient = await apiClient('messaging', 'http');
  const opened: Socket[] = [];

  /** Opens a socket with the token in the Authorization header, or as a browser does, in the subprotocols; `after` resumes. */
  function connect(token: string, options: { via?: 'header' | 'protocol'; after?: string; path?: string } = {}): Promise<Socket> {
    const at = `${server.url}${options.path ?? ''}`;
    const url = options.after === undefined ? at : `${at}?after=${encodeURIComponent(options.after)}`;
    const ws =
      options.via === 'protocol'
        ? new WebSocket(url, ['bearer', token])
        : new WebSocket(url, { headers: { Authorization: `Bearer ${token}` } });
    const socket: Socket = {
      ws,
      frames: [],
      close: () =>
        new Promise<void>((resolve) => (ws.readyState === ws.CLOSED ? resolve() : (ws.once('close', () => resolve()), ws.close()))),
    };
    ws.on('message', (data) => {
      const frame = JSON.parse(data.toString()) as Frame;
      if (!validFrame(frame)) throw new Error(`frame not in docs/openapi.yaml: ${JSON.stringify(validFrame.errors)}\n${data}`);
      socket.frames.push(frame);
    });
    opened.push(socket);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(socket));
      ws.once('unexpected-response', (_req, res) => reject(new Error(`refused ${res.statusCode}`)));
      ws.once('error', reject);
    });
  }

  async function stop() {
    for (const s of opened) s.ws.terminate();
    await streams.stop();
    await server.close();
    await messaging.close();
  }

  return { server, messaging, connect, stop };
}
