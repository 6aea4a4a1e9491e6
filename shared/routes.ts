/**
 * The one route table. The CDK stack creates one Lambda and one API Gateway
 * method per row; the local server routes real HTTP requests with the same
 * rows, so the two cannot drift.
 */
export type ApiName = 'messaging' | 'email';

/** The API Gateway stage both APIs deploy to (and the local server reports in its events). */
export const STAGE_NAME = 'prod';
/** Every function's memory, in MB. */
export const MEMORY_MB = 256;
/** A function's timeout unless its row says otherwise. */
export const DEFAULT_TIMEOUT_SECONDS = 10;
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';
export type TableAccess = 'read' | 'readWrite';
export type QueueName = keyof typeof import('./queues.ts').queues;

export interface Route {
  api: ApiName;
  method: HttpMethod;
  /** API Gateway resource path, `{name}` for path parameters. */
  path: string;
  /** Module under functions/, without extension; it exports `handler`. */
  handler: string;
  table: TableAccess;
  /** Queues the function sends to (least-privilege grants). */
  sends?: QueueName[];
  /** Lambda timeout in seconds (default DEFAULT_TIMEOUT_SECONDS). */
  timeoutSeconds?: number;
  /** Runs the email validator: gets the deployment's validator settings (DNS_SERVERS, SMTP_PROBE, ...). */
  validates?: boolean;
}

export const routes: readonly Route[] = [
  { api: 'messaging', method: 'GET', path: '/v1/conversations', handler: 'conversations/list', table: 'read' },
  { api: 'messaging', method: 'POST', path: '/v1/conversations', handler: 'conversations/create', table: 'readWrite' },
  { api: 'messaging', method: 'GET', path: '/v1/conversations/{id}', handler: 'conversations/get', table: 'read' },
  { api: 'messaging', method: 'PUT', path: '/v1/conversations/{id}', handler: 'conversations/update', table: 'readWrite' },
  {
    api: 'messaging',
    method: 'DELETE',
    path: '/v1/conversations/{id}',
    handler: 'conversations/delete',
    table: 'readWrite',
    sends: ['purge'],
    timeoutSeconds: 20,
  },
  { api: 'messaging', method: 'GET', path: '/v1/messages', handler: 'messages/list', table: 'read' },
  {
    api: 'messaging',
    method: 'POST',
    path: '/v1/messages',
    handler: 'messages/create',
    table: 'readWrite',
    sends: ['delivery'],
    timeoutSeconds: 20,
  },
  { api: 'messaging', method: 'GET', path: '/v1/messages/{id}', handler: 'messages/get', table: 'read' },
  { api: 'messaging', method: 'PUT', path: '/v1/messages/{id}', handler: 'messages/update', table: 'readWrite' },
  {
    api: 'messaging',
    method: 'DELETE',
    path: '/v1/messages/{id}',
    handler: 'messages/delete',
    table: 'readWrite',
    sends: ['delivery'],
    timeoutSeconds: 20,
  },

  {
    api: 'email',
    method: 'POST',
    path: '/api/v1/emails',
    handler: 'emails/create',
    table: 'readWrite',
    sends: ['validation'],
    timeoutSeconds: 15,
    validates: true,
  },
  { api: 'email', method: 'GET', path: '/api/v1/emails', handler: 'emails/list', table: 'read' },
  { api: 'email', method: 'GET', path: '/api/v1/email/{id}', handler: 'emails/get', table: 'read' },
  { api: 'email', method: 'DELETE', path: '/api/v1/email/{id}', handler: 'emails/delete', table: 'readWrite' },
  { api: 'email', method: 'POST', path: '/api/v1/emailList', handler: 'email-lists/create', table: 'readWrite' },
  { api: 'email', method: 'GET', path: '/api/v1/emailLists', handler: 'email-lists/list', table: 'read' },
  { api: 'email', method: 'GET', path: '/api/v1/emailList/{id}', handler: 'email-lists/get', table: 'read' },
  {
    api: 'email',
    method: 'DELETE',
    path: '/api/v1/emailList/{id}',
    handler: 'email-lists/delete',
    table: 'readWrite',
    sends: ['purge'],
    timeoutSeconds: 20,
  },
  { api: 'email', method: 'GET', path: '/api/v1/emailList/{id}/emails', handler: 'email-lists/emails', table: 'read' },
  {
    api: 'email',
    method: 'POST',
    path: '/api/v1/emailList/{id}/emails',
    handler: 'email-lists/add',
    table: 'readWrite',
    sends: ['validation'],
    timeoutSeconds: 20,
  },
];

/** The methods an API's routes use (its CORS preflight allows these). */
export const apiMethods = (api: ApiName): HttpMethod[] => [...new Set(routes.filter((r) => r.api === api).map((r) => r.method))];

/** Verifies bearer tokens for every route above (API Gateway Lambda authorizer). */
export const authorizer = { handler: 'auth/authorizer', table: 'read' as TableAccess };

/** Answers 404 for unknown paths and 405 for known paths with another method. */
export const fallback = { handler: 'http/fallback' };

/** Queue consumers: the Lambda event source mapping on AWS, a poller locally. */
export interface Worker {
  name: string;
  handler: string;
  queue: QueueName;
  table: TableAccess;
  sends?: QueueName[];
  batchSize: number;
  timeoutSeconds: number;
  /** Most concurrent invocations the event source starts (Lambda's minimum is 2); docs/operations.md says why. */
  maxConcurrency: number;
  /** Consume the queue's dead-letter queue instead of the queue itself. */
  deadLetters?: boolean;
  validates?: boolean;
  /** Opens webhook secrets (kms:Decrypt on the webhook key). */
  decrypts?: boolean;
  /**
   * Locally, receive one message at a time: the SQS emulator holds a long
   * poll until the batch is full or the wait ends, where SQS answers as soon
   * as a message is there. For workers whose latency the contract bounds.
   */
  latencySensitive?: boolean;
}

export const workers: readonly Worker[] = [
  {
    name: 'purge',
    handler: 'workers/purge',
    queue: 'purge',
    table: 'readWrite',
    sends: ['purge'],
    batchSize: 1,
    timeoutSeconds: 60,
    maxConcurrency: 2,
  },
  {
    name: 'deliver-messages',
    handler: 'workers/deliver-messages',
    queue: 'delivery',
    table: 'readWrite',
    sends: ['delivery'],
    batchSize: 1,
    timeoutSeconds: 60,
    maxConcurrency: 2,
  },
  {
    name: 'validate-emails',
    handler: 'workers/validate-emails',
    queue: 'validation',
    table: 'readWrite',
    validates: true,
    batchSize: 10,
    timeoutSeconds: 60,
    maxConcurrency: 5,
  },
  {
    name: 'deliver-webhooks',
    handler: 'workers/deliver-webhooks',
    queue: 'webhooks',
    table: 'readWrite',
    sends: ['webhooks'],
    batchSize: 10,
    // Ten attempts of at most 10 s each, in parallel, with room for the records and the next sends.
    timeoutSeconds: 30,
    maxConcurrency: 2,
    decrypts: true,
    latencySensitive: true,
  },
  {
    name: 'validation-dead-letters',
    handler: 'workers/validation-dead-letters',
    queue: 'validation',
    deadLetters: true,
    table: 'readWrite',
    batchSize: 10,
    timeoutSeconds: 60,
    maxConcurrency: 2,
  },
];

/**
 * Consumers of the table's change stream: a DynamoDB event source mapping on
 * AWS (partial batch failures, bisect on error, a dead-letter queue for
 * records that keep failing), a poller of DynamoDB Local's stream locally.
 * `sortKeys` is the event filter: only changes of items with these sort keys
 * (exact, or by prefix) invoke the function.
 */
export interface StreamConsumer {
  name: string;
  handler: string;
  table: TableAccess;
  sends?: QueueName[];
  batchSize: number;
  timeoutSeconds: number;
  /** Attempts of a failing batch (after bisecting) before its records go to the dead-letter queue. */
  retryAttempts: number;
  /** Concurrent batches per shard (Lambda's ParallelizationFactor; changes of one item stay in order). */
  parallelization?: number;
  /** Posts to the realtime API's connections (its callback URL, execute-api:ManageConnections); absent where there is no WebSocket API. */
  realtime?: boolean;
  /**
   * Locally, poll an idle stream every 25 ms instead of 100 ms: for the
   * consumer whose latency a person watches (a chat client's frame). Lambda
   * itself polls a shard about four times a second.
   */
  latencySensitive?: boolean;
  sortKeys: { exact: readonly string[]; prefix: readonly string[] };
}

export const streams: readonly StreamConsumer[] = [
  {
    name: 'webhook-events',
    handler: 'workers/webhook-events',
    table: 'read',
    sends: ['webhooks'],
    batchSize: 100,
    timeoutSeconds: 60,
    retryAttempts: 10,
    // The items whose changes are events (shared/webhooks/events.ts, EVENT_SORT_KEYS).
    sortKeys: { exact: ['CONV', 'LIST'], prefix: ['MSG#'] },
  },
  {
    name: 'realtime-events',
    handler: 'workers/realtime-events',
    // Deletes the connections API Gateway reports gone.
    table: 'readWrite',
    batchSize: 100,
    timeoutSeconds: 60,
    // A frame is worth sending only now: a batch that keeps failing is not held up long.
    retryAttempts: 2,
    // A 1,000-member send's records spread over several concurrent batches (docs/realtime.md).
    parallelization: 4,
    realtime: true,
    latencySensitive: true,
    // Conversations, thread messages (edits, reactions) and each participant's entry (delivery, reads: shared/realtime/events.ts).
    sortKeys: { exact: ['CONV'], prefix: ['MSG#', '#MSG#'] },
  },
];

/**
 * The realtime WebSocket API: one Lambda per route, as for the REST APIs.
 * API Gateway runs `authorizer` on `$connect` (a REQUEST authorizer: the
 * token comes in `Authorization` or in the `bearer`, `<token>` subprotocol
 * pair); `npm start` serves the same routes with the same handlers.
 */
export interface RealtimeRoute {
  route: '$connect' | '$disconnect' | '$default';
  handler: string;
  table: TableAccess;
  /** Posts to connections (execute-api:ManageConnections on this API). */
  manages?: boolean;
}

export const realtime = {
  authorizer: { handler: 'realtime/authorizer', table: 'read' as TableAccess },
  routes: [
    { route: '$connect', handler: 'realtime/connect', table: 'readWrite' },
    { route: '$disconnect', handler: 'realtime/disconnect', table: 'readWrite' },
    { route: '$default', handler: 'realtime/default', table: 'readWrite', manages: true },
  ] as readonly RealtimeRoute[],
};

/** Scheduled functions: an EventBridge rule on AWS, a timer locally. */
export interface Schedule {
  name: string;
  handler: string;
  everyMinutes: number;
  table: TableAccess;
  sends?: QueueName[];
  timeoutSeconds: number;
}

export const schedules: readonly Schedule[] = [
  {
    name: 'sweeper',
    handler: 'workers/sweeper',
    everyMinutes: 1,
    table: 'readWrite',
    sends: ['validation', 'purge', 'delivery'],
    timeoutSeconds: 60,
  },
];

const safeDecode = (segment: string) => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment; // a malformed escape is just an id that names nothing
  }
};

/** Splits `/v1/messages/{id}` into segments; a `{x}` segment matches any one segment. */
export function matchPath(template: string, path: string): Record<string, string> | undefined {
  const want = template.split('/').filter(Boolean);
  const got = path.split('/').filter(Boolean);
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (const [i, segment] of want.entries()) {
    const actual = got[i]!;
    if (segment.startsWith('{') && segment.endsWith('}')) {
      params[segment.slice(1, -1)] = safeDecode(actual);
    } else if (segment !== actual) return undefined;
  }
  return params;
}

export type RouteMatch =
  | { kind: 'route'; route: Route; pathParameters: Record<string, string> }
  | { kind: 'method_not_allowed'; allowed: HttpMethod[] }
  | { kind: 'not_found' };

export function resolveRoute(api: ApiName, method: string, path: string): RouteMatch {
  const candidates = routes
    .filter((r) => r.api === api)
    .map((route) => ({ route, params: matchPath(route.path, path) }))
    .filter((c): c is { route: Route; params: Record<string, string> } => c.params !== undefined);
  const hit = candidates.find((c) => c.route.method === method);
  if (hit) return { kind: 'route', route: hit.route, pathParameters: hit.params };
  if (candidates.length > 0) return { kind: 'method_not_allowed', allowed: candidates.map((c) => c.route.method) };
  return { kind: 'not_found' };
}
