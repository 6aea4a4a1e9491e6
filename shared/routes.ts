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
  /**
   * The credential the route takes: a user token (`user`), the account's
   * secret key (`secret`), or either (`any`). Every route sits behind the one
   * authorizer, which names the kind; the handler answers 403 to the other
   * (its endpoint spec says the same, and a test holds the two equal).
   */
  credential: Credential;
  /** Shows the account's rate limit: gets the deployment's default (ACCOUNT_RATE_LIMIT, ACCOUNT_BURST_LIMIT). */
  showsLimits?: boolean;
  /** Seals a new webhook secret (kms:Encrypt on the webhook key). */
  seals?: boolean;
}

export type Credential = 'user' | 'secret' | 'any';

/** A platform route: the account's backend, with its secret key. */
const platform = (method: HttpMethod, path: string, handler: string, table: TableAccess, extra: Partial<Route> = {}): Route => ({
  api: 'messaging',
  method,
  path,
  handler,
  table,
  credential: 'secret',
  ...extra,
});

export const routes: readonly Route[] = [
  { api: 'messaging', method: 'GET', path: '/v1/conversations', handler: 'conversations/list', table: 'read', credential: 'user' },
  { api: 'messaging', method: 'POST', path: '/v1/conversations', handler: 'conversations/create', table: 'readWrite', credential: 'user' },
  { api: 'messaging', method: 'GET', path: '/v1/conversations/{id}', handler: 'conversations/get', table: 'read', credential: 'user' },
  {
    api: 'messaging',
    method: 'PUT',
    path: '/v1/conversations/{id}',
    handler: 'conversations/update',
    table: 'readWrite',
    credential: 'user',
  },
  {
    api: 'messaging',
    credential: 'user',
    method: 'DELETE',
    path: '/v1/conversations/{id}',
    handler: 'conversations/delete',
    table: 'readWrite',
    sends: ['purge'],
    timeoutSeconds: 20,
  },
  { api: 'messaging', method: 'GET', path: '/v1/messages', handler: 'messages/list', table: 'read', credential: 'user' },
  {
    api: 'messaging',
    credential: 'user',
    method: 'POST',
    path: '/v1/messages',
    handler: 'messages/create',
    table: 'readWrite',
    sends: ['delivery'],
    timeoutSeconds: 20,
  },
  { api: 'messaging', method: 'GET', path: '/v1/messages/{id}', handler: 'messages/get', table: 'read', credential: 'user' },
  { api: 'messaging', method: 'PUT', path: '/v1/messages/{id}', handler: 'messages/update', table: 'readWrite', credential: 'user' },
  {
    api: 'messaging',
    credential: 'user',
    method: 'DELETE',
    path: '/v1/messages/{id}',
    handler: 'messages/delete',
    table: 'readWrite',
    sends: ['delivery'],
    timeoutSeconds: 20,
  },

  platform('POST', '/v1/contacts', 'contacts/create', 'readWrite'),
  platform('GET', '/v1/contacts', 'contacts/list', 'read'),
  // A user token may read its account's contacts too: a read-only directory.
  platform('GET', '/v1/contacts/{id}', 'contacts/get', 'read', { credential: 'any' }),
  platform('PUT', '/v1/contacts/{id}', 'contacts/update', 'readWrite'),
  platform('DELETE', '/v1/contacts/{id}', 'contacts/delete', 'readWrite', { sends: ['purge'], timeoutSeconds: 20 }),
  platform('POST', '/v1/contacts/{id}/tokens', 'contact-tokens/create', 'readWrite'),
  platform('GET', '/v1/contacts/{id}/tokens', 'contact-tokens/list', 'read'),
  platform('DELETE', '/v1/contacts/{id}/tokens/{token_id}', 'contact-tokens/delete', 'readWrite'),
  // A group of 1,000 arrives with its members: 40 batch writes and 10 batch reads, within 20 s on a slow day.
  platform('POST', '/v1/groups', 'groups/create', 'readWrite', { timeoutSeconds: 20 }),
  platform('GET', '/v1/groups', 'groups/list', 'read'),
  platform('GET', '/v1/groups/{id}', 'groups/get', 'read'),
  platform('PUT', '/v1/groups/{id}', 'groups/update', 'readWrite'),
  platform('DELETE', '/v1/groups/{id}', 'groups/delete', 'readWrite', { sends: ['purge'], timeoutSeconds: 20 }),
  platform('POST', '/v1/groups/{id}/members', 'group-members/add', 'readWrite'),
  platform('GET', '/v1/groups/{id}/members', 'group-members/list', 'read'),
  platform('DELETE', '/v1/groups/{id}/members/{contact_id}', 'group-members/remove', 'readWrite'),
  platform('POST', '/v1/webhook_endpoints', 'webhook-endpoints/create', 'readWrite', { seals: true }),
  platform('GET', '/v1/webhook_endpoints', 'webhook-endpoints/list', 'read'),
  platform('GET', '/v1/webhook_endpoints/{id}', 'webhook-endpoints/get', 'read'),
  platform('PUT', '/v1/webhook_endpoints/{id}', 'webhook-endpoints/update', 'readWrite'),
  platform('DELETE', '/v1/webhook_endpoints/{id}', 'webhook-endpoints/delete', 'readWrite'),
  platform('POST', '/v1/webhook_endpoints/{id}/rotate_secret', 'webhook-endpoints/rotate-secret', 'readWrite', { seals: true }),
  platform('GET', '/v1/account', 'account/messaging', 'read', { showsLimits: true }),
  // A user token reads its user's events, a secret key the account's.
  platform('GET', '/v1/events', 'events/list', 'read', { credential: 'any' }),

  {
    api: 'email',
    credential: 'any',
    method: 'POST',
    path: '/api/v1/emails',
    handler: 'emails/create',
    table: 'readWrite',
    sends: ['validation'],
    timeoutSeconds: 15,
    validates: true,
  },
  { api: 'email', method: 'GET', path: '/api/v1/emails', handler: 'emails/list', table: 'read', credential: 'any' },
  { api: 'email', method: 'GET', path: '/api/v1/email/{id}', handler: 'emails/get', table: 'read', credential: 'any' },
  { api: 'email', method: 'DELETE', path: '/api/v1/email/{id}', handler: 'emails/delete', table: 'readWrite', credential: 'any' },
  { api: 'email', method: 'POST', path: '/api/v1/emailList', handler: 'email-lists/create', table: 'readWrite', credential: 'any' },
  { api: 'email', method: 'GET', path: '/api/v1/emailLists', handler: 'email-lists/list', table: 'read', credential: 'any' },
  { api: 'email', method: 'GET', path: '/api/v1/emailList/{id}', handler: 'email-lists/get', table: 'read', credential: 'any' },
  {
    api: 'email',
    credential: 'any',
    method: 'DELETE',
    path: '/api/v1/emailList/{id}',
    handler: 'email-lists/delete',
    table: 'readWrite',
    sends: ['purge'],
    timeoutSeconds: 20,
  },
  { api: 'email', method: 'GET', path: '/api/v1/emailList/{id}/emails', handler: 'email-lists/emails', table: 'read', credential: 'any' },
  { api: 'email', method: 'GET', path: '/api/v1/account', handler: 'account/email', table: 'read', credential: 'any', showsLimits: true },
  {
    api: 'email',
    credential: 'any',
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
   * as a message is there. For workers with a latency to keep locally (a
   * webhook's first attempt within 2 s of the response that caused it).
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
    name: 'event-feed',
    handler: 'workers/event-feed',
    // Appends to the events feeds; reads what an event presents (the message, its sender).
    table: 'readWrite',
    batchSize: 100,
    timeoutSeconds: 60,
    retryAttempts: 10,
    // One batch per shard at a time: appends to one feed (the account's above all) from concurrent batches would race for
    // each number (safe, shared/data/events.ts, but each loss costs a read and a retry).
    latencySensitive: true,
    // The items whose changes are events: conversations, lists, thread messages and each participant's entry (shared/stream/).
    sortKeys: { exact: ['CONV', 'LIST'], prefix: ['MSG#', '#MSG#'] },
  },
  {
    name: 'webhook-events',
    handler: 'workers/webhook-events',
    table: 'read',
    sends: ['webhooks'],
    batchSize: 100,
    timeoutSeconds: 60,
    retryAttempts: 10,
    // Events appended to an account's feed: a webhook's body is the feed's event.
    sortKeys: { exact: [], prefix: ['AEVT#'] },
  },
  {
    name: 'realtime-events',
    handler: 'workers/realtime-events',
    // Deletes the connections API Gateway reports gone; records a replay's end.
    table: 'readWrite',
    batchSize: 100,
    timeoutSeconds: 60,
    // A frame is worth sending only now: a batch that keeps failing is not held up long.
    retryAttempts: 2,
    // Users' partitions spread over concurrent batches; one user's changes stay in order in one.
    parallelization: 4,
    realtime: true,
    latencySensitive: true,
    // Events appended to a user's feed, and connections opened in that partition (their replay).
    sortKeys: { exact: [], prefix: ['EVT#', 'CONN#'] },
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
