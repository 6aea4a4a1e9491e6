import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { ApiName } from '#shared/routes';
import { dispatch } from './api-gateway.ts';
import type { Invoker } from './lambda.ts';
import type { AccountRateLimiter } from './rate-limiter.ts';

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });

/**
 * How long a stop waits for the requests under way to be answered: on
 * Ctrl-C or SIGTERM, a request whose write commits is answered rather than
 * cut (its client would see a failure for a committed write, and a retry
 * without an Idempotency-Key would make it twice). The longest route
 * timeout is 20 s; what is still running after this is cut.
 */
const DRAIN_MS = 10_000;

export interface RunningApi {
  url: string;
  server: Server;
  close: () => Promise<void>;
}

/** Serves one API over real HTTP on loopback through the API Gateway emulation (rate-limited per account with a `limiter`). */
export async function startApiServer(
  api: ApiName,
  port: number,
  host = '127.0.0.1',
  run?: Invoker,
  limiter?: AccountRateLimiter,
): Promise<RunningApi> {
  let running = 0;
  const drained: (() => void)[] = [];
  const server = createServer(async (req, res) => {
    running++;
    try {
      const result = await dispatch(
        api,
        {
          method: req.method ?? 'GET',
          url: req.url ?? '/',
          headers: req.headers,
          body: await readBody(req),
        },
        run,
        limiter,
      );
      res.writeHead(result.statusCode, result.headers as Record<string, string>);
      res.end(result.body);
    } catch (error) {
      // A handler that throws is a bug: answer like API Gateway's DEFAULT_5XX, never with the error text.
      console.error(error);
      res.writeHead(502, { 'Content-Type': 'application/json', 'X-Request-Id': randomUUID() });
      res.end(JSON.stringify({ error: { type: 'api_error', code: 'internal_error', message: 'An internal error occurred' } }));
    } finally {
      if (--running === 0) for (const resolve of drained.splice(0)) resolve();
    }
  });
  // Requests Node cannot even parse get the envelope too, as API Gateway's DEFAULT_4XX would give.
  server.on('clientError', (_error, socket) => {
    const body = JSON.stringify({ error: { type: 'invalid_request_error', code: 'bad_request', message: 'Malformed HTTP request' } });
    socket.end(
      `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as { port: number };
  return {
    url: `http://${host}:${address.port}`,
    server,
    // No new connection from now on; the requests under way are answered first (at most DRAIN_MS), then every connection goes.
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const within = async (ms: number, what: Promise<unknown>) => {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([what, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
        clearTimeout(timer);
      };
      if (running > 0) await within(DRAIN_MS, new Promise<void>((resolve) => drained.push(resolve)));
      // Idle connections go at once; one still writing its answer gets a moment to finish it, then everything goes.
      server.closeIdleConnections();
      await within(1_000, closed);
      server.closeAllConnections();
      await closed;
    },
  };
}
