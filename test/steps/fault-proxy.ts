import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resetDb } from '#shared/db/client';

/**
 * What can go wrong between a client and DynamoDB: `throttle` answers 400
 * ThrottlingException, `error` answers 500 InternalServerError (neither
 * reaches DynamoDB), `lose-reply` carries the request out and, when
 * DynamoDB did it (200), drops the connection before any answer (the client
 * sees a socket hang up, as when a response is lost or a Lambda times out
 * after its write); a refused request is answered as usual.
 */
export type Fault = 'throttle' | 'error' | 'lose-reply';

/** A DynamoDB request as the proxy sees it: the operation (`PutItem`, `TransactWriteItems`, ...) and its JSON body. */
export interface SeenRequest {
  operation: string;
  // The wire format's JSON, read by matchers only.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

export interface FaultRule {
  operation: string;
  /** Only requests it accepts are hit (all of the operation when absent). */
  match?: (request: SeenRequest) => boolean;
  fault: Fault;
  /** How many matching requests it hits; every one when absent. */
  times?: number;
}

export interface RandomFaults {
  throttle: number;
  error: number;
  loseReply: number;
  /** Operations that may be hit (every write when absent). */
  operations?: string[];
}

export interface FaultProxy {
  url: string;
  /** Adds a rule; rules are tried in the order added. */
  inject(rule: FaultRule): void;
  /** Faults on a share of the requests, e.g. `{ throttle: 0.1, error: 0.02, loseReply: 0.05 }`. */
  randomly(faults: RandomFaults): void;
  /** No more faults. */
  clear(): void;
  /** How many requests each fault hit, per operation (`PutItem:lose-reply`). */
  hits: Map<string, number>;
  stop(): Promise<void>;
}

export const WRITE_OPERATIONS = ['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems'];

const errorBodies: Record<Exclude<Fault, 'lose-reply'>, { status: number; type: string; message: string }> = {
  throttle: { status: 400, type: 'ThrottlingException', message: 'Rate of requests exceeds the allowed throughput.' },
  error: { status: 500, type: 'InternalServerError', message: 'Internal server error' },
};

/**
 * An HTTP proxy in front of DynamoDB Local that injects faults per operation
 * (and per request, through a matcher), so a test can show what the service
 * does when a write is throttled, refused, or carried out with its answer lost.
 */
export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const rules: (FaultRule & { left: number })[] = [];
  let random: RandomFaults | undefined;
  const hits = new Map<string, number>();

  const pick = (seen: SeenRequest): { fault: Fault; rule?: (typeof rules)[number] } | undefined => {
    for (const rule of rules) {
      if (rule.left <= 0 || rule.operation !== seen.operation || (rule.match && !rule.match(seen))) continue;
      rule.left--;
      return { fault: rule.fault, rule };
    }
    if (!random || !(random.operations ?? WRITE_OPERATIONS).includes(seen.operation)) return undefined;
    const roll = Math.random();
    if (roll < random.throttle) return { fault: 'throttle' };
    if (roll < random.throttle + random.error) return { fault: 'error' };
    if (roll < random.throttle + random.error + random.loseReply) return { fault: 'lose-reply' };
    return undefined;
  };

  const forward = (req: IncomingMessage, body: Buffer) =>
    new Promise<{ status: number; headers: IncomingMessage['headers']; body: Buffer }>((resolve, reject) => {
      const out = request(`${target}${req.url ?? '/'}`, { method: req.method, headers: req.headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 500, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      out.on('error', reject);
      out.end(body);
    });

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const operation = String(req.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      parsed = undefined;
    }
    const picked = pick({ operation, body: parsed });
    const fault = picked?.fault;
    const hit = () => hits.set(`${operation}:${fault}`, (hits.get(`${operation}:${fault}`) ?? 0) + 1);
    if (fault === 'throttle' || fault === 'error') {
      hit();
      const { status, type, message } = errorBodies[fault];
      res.writeHead(status, { 'Content-Type': 'application/x-amz-json-1.0', 'x-amzn-RequestId': 'fault-proxy' });
      res.end(JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${type}`, message }));
      return;
    }
    const answer = await forward(req, body);
    // Only a request carried out loses its answer: a refusal (a failed condition) is answered, and the rule waits for the next.
    if (fault === 'lose-reply' && answer.status === 200) {
      hit();
      req.socket.destroy();
      return;
    }
    if (fault === 'lose-reply' && picked?.rule) picked.rule.left++;
    res.writeHead(answer.status, answer.headers);
    res.end(answer.body);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => req.socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    inject: (rule) => rules.push({ ...rule, left: rule.times ?? Number.POSITIVE_INFINITY }),
    randomly: (faults) => (random = faults),
    clear: () => {
      rules.length = 0;
      random = undefined;
    },
    hits,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Sends this process's DynamoDB calls (the handlers run in-process) through
 * a fault proxy until the returned function is called.
 */
export async function throughFaultProxy(): Promise<{ proxy: FaultProxy; restore: () => Promise<void> }> {
  const target = process.env.AWS_ENDPOINT_URL_DYNAMODB;
  if (!target) throw new Error('AWS_ENDPOINT_URL_DYNAMODB is not set: the fault proxy needs DynamoDB Local');
  const proxy = await startFaultProxy(target);
  process.env.AWS_ENDPOINT_URL_DYNAMODB = proxy.url;
  resetDb();
  return {
    proxy,
    restore: async () => {
      process.env.AWS_ENDPOINT_URL_DYNAMODB = target;
      resetDb();
      await proxy.stop();
    },
  };
}

/** Whether a request's key (or its first item's) names a partition containing `part`, e.g. `#IDEM#`. */
export const touches = (seen: SeenRequest, part: string): boolean => JSON.stringify(seen.body ?? {}).includes(part);
