import { randomBytes } from 'node:crypto';
import { createServer, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { header } from '#shared/http/middleware';
import { realtime, STAGE_NAME } from '#shared/routes';
import { invokeSource, type Invoker } from './lambda.ts';

/**
 * API Gateway's WebSocket API on loopback, for `npm start` and the tests:
 * the upgrade runs the `$connect` authorizer and handler, each frame a
 * client sends runs `$default`, a close runs `$disconnect` (the same
 * handlers as on AWS, from the one route table), and the `@connections`
 * management API (`POST`/`DELETE /<stage>/@connections/<id>`) is served on
 * the same port, so the stream consumer posts frames with the same SDK
 * client as on AWS.
 */
export interface RunningRealtime {
  url: string;
  /** The `@connections` endpoint (REALTIME_ENDPOINT for the stream consumer). */
  callbackUrl: string;
  /** Open connections, for tests. */
  connections: () => number;
  close: () => Promise<void>;
}

type Headers = Record<string, string>;

const flatHeaders = (req: IncomingMessage): Headers =>
  Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]));

/** API Gateway's connection ids: 12 random bytes, base64 (like `L0SM9cOFvHcCIhw=`). */
const newConnectionId = () => randomBytes(12).toString('base64');

function refuse(socket: Duplex, status: number, reason: string) {
  const body = JSON.stringify({ message: reason });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

const handlerOf = (route: '$connect' | '$disconnect' | '$default') => realtime.routes.find((r) => r.route === route)!.handler;

export async function startRealtimeServer(port: number, host = '127.0.0.1', run: Invoker = invokeSource): Promise<RunningRealtime> {
  const sockets = new Map<string, WebSocket>();
  // API Gateway's WebSocket frames are at most 128 KB; ws alone would take 100 MiB.
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: 128 * 1024,
    handleProtocols: (protocols, req) => (req as Accepted).accepted ?? false,
  });
  type Accepted = IncomingMessage & { accepted?: string };
  // Known once the server listens (port 0 picks one).
  let domainName = `${host}:${port}`;
  // Invocations still running when the server closes are awaited, so none outlives what it uses.
  const running = new Set<Promise<unknown>>();
  const invoke = (handler: string, event: unknown) => {
    const call = run({ handler }, event, 30);
    running.add(call);
    void call.finally(() => running.delete(call)).catch(() => undefined);
    return call;
  };

  const context = (connectionId: string, routeKey: string, authorizer: Record<string, unknown> | null) => ({
    routeKey,
    eventType: routeKey === '$connect' ? 'CONNECT' : routeKey === '$disconnect' ? 'DISCONNECT' : 'MESSAGE',
    connectionId,
    domainName,
    stage: STAGE_NAME,
    apiId: 'local',
    requestId: randomBytes(8).toString('hex'),
    requestTimeEpoch: Date.now(),
    authorizer,
  });

  async function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer) {
    const url = new URL(req.url ?? '/', 'ws://realtime');
    // The API's one endpoint is its stage (given out here as the root): another path names nothing, and API Gateway
    // answers it 403 before any authorizer runs.
    if (!['/', `/${STAGE_NAME}`, `/${STAGE_NAME}/`].includes(url.pathname)) return refuse(socket, 403, 'Forbidden');
    const connectionId = newConnectionId();
    const headers = flatHeaders(req);
    // As API Gateway: the URL's query reaches the authorizer and `$connect` as a map (the last value of a repeated name).
    const query = url.searchParams;
    const queryStringParameters = query.size > 0 ? Object.fromEntries(query) : null;
    let authorizer: Record<string, unknown>;
    try {
      const auth = (await invoke(realtime.authorizer.handler, {
        type: 'REQUEST',
        methodArn: `arn:aws:execute-api:local:000000000000:local/${STAGE_NAME}/$connect`,
        headers,
        queryStringParameters,
        requestContext: context(connectionId, '$connect', null),
      })) as APIGatewayAuthorizerResult;
      if (auth.policyDocument.Statement.some((s) => s.Effect === 'Deny')) return refuse(socket, 403, 'Forbidden');
      authorizer = { ...auth.context, principalId: auth.principalId };
    } catch (error) {
      // As API Gateway: "Unauthorized" from the authorizer is a 401, any other failure a 500.
      return (error as Error).message === 'Unauthorized'
        ? refuse(socket, 401, 'Unauthorized')
        : refuse(socket, 500, 'Internal Server Error');
    }
    const answer = (await invoke(handlerOf('$connect'), {
      headers,
      queryStringParameters,
      requestContext: context(connectionId, '$connect', authorizer),
    }).catch(() => ({ statusCode: 500 }))) as { statusCode: number; headers?: Headers };
    if (answer.statusCode < 200 || answer.statusCode > 299)
      return refuse(socket, answer.statusCode, STATUS_CODES[answer.statusCode] ?? 'Forbidden');
    // Header names are case-insensitive, as API Gateway reads them.
    (req as Accepted).accepted = header(answer, 'sec-websocket-protocol');
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.set(connectionId, ws);
      ws.on('message', (data) => {
        void invoke(handlerOf('$default'), {
          body: data.toString(),
          requestContext: context(connectionId, '$default', authorizer),
        }).catch((error) => console.error('[realtime] $default failed', (error as Error).message));
      });
      ws.on('close', () => {
        sockets.delete(connectionId);
        void invoke(handlerOf('$disconnect'), { requestContext: context(connectionId, '$disconnect', authorizer) }).catch((error) =>
          console.error('[realtime] $disconnect failed', (error as Error).message),
        );
      });
    });
  }

  /** `@connections`: a post to a closed connection is 410 Gone, as API Gateway answers. */
  function management(req: IncomingMessage, res: ServerResponse) {
    const match = /\/@connections\/([^/?]+)$/.exec(req.url ?? '');
    const ws = match ? sockets.get(decodeURIComponent(match[1]!)) : undefined;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (!match) {
        res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"message":"Not Found"}');
      } else if (!ws || ws.readyState !== ws.OPEN) {
        res.writeHead(410, { 'Content-Type': 'application/json', 'x-amzn-ErrorType': 'GoneException' }).end('{"message":"Gone"}');
      } else if (req.method === 'POST') {
        ws.send(Buffer.concat(chunks).toString('utf8'));
        res.writeHead(200).end();
      } else if (req.method === 'DELETE') {
        ws.close(1000);
        res.writeHead(204).end();
      } else {
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ connectedAt: new Date().toISOString() }));
      }
    });
  }

  const server = createServer(management);
  server.on('upgrade', (req, socket, head) => {
    upgrade(req, socket, head).catch(() => refuse(socket, 500, 'Internal Server Error'));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const base = `${host}:${(server.address() as { port: number }).port}`;
  domainName = base;
  return {
    url: `ws://${base}`,
    callbackUrl: `http://${base}/${STAGE_NAME}`,
    connections: () => sockets.size,
    close: async () => {
      for (const ws of sockets.values()) ws.terminate();
      wss.close();
      await new Promise((r) => setImmediate(r));
      await Promise.allSettled([...running]);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
