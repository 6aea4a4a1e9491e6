/**
 * The one route table. The CDK stack creates one Lambda and one API Gateway
 * method per row; the local server routes real HTTP requests with the same
 * rows, so the two cannot drift.
 */
export type ApiName = 'chat' | 'email';
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
  /** Lambda timeout in seconds (default 10). */
  timeoutSeconds?: number;
}

export const routes: readonly Route[] = [
  { api: 'chat', method: 'GET', path: '/v1/conversations', handler: 'conversations/list', table: 'read' },
  { api: 'chat', method: 'POST', path: '/v1/conversations', handler: 'conversations/create', table: 'readWrite' },
  { api: 'chat', method: 'GET', path: '/v1/conversations/{id}', handler: 'conversations/get', table: 'read' },
  { api: 'chat', method: 'PUT', path: '/v1/conversations/{id}', handler: 'conversations/update', table: 'readWrite' },
  {
    api: 'chat',
    method: 'DELETE',
    path: '/v1/conversations/{id}',
    handler: 'conversations/delete',
    table: 'readWrite',
    sends: ['purge'],
    timeoutSeconds: 20,
  },
  { api: 'chat', method: 'GET', path: '/v1/messages', handler: 'messages/list', table: 'read' },
  { api: 'chat', method: 'POST', path: '/v1/messages', handler: 'messages/create', table: 'readWrite' },
  { api: 'chat', method: 'GET', path: '/v1/messages/{id}', handler: 'messages/get', table: 'read' },
  { api: 'chat', method: 'PUT', path: '/v1/messages/{id}', handler: 'messages/update', table: 'readWrite' },
  { api: 'chat', method: 'DELETE', path: '/v1/messages/{id}', handler: 'messages/delete', table: 'readWrite' },
];

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
}

export const workers: readonly Worker[] = [
  {
    name: 'purge-conversation',
    handler: 'workers/purge-conversation',
    queue: 'purge',
    table: 'readWrite',
    sends: ['purge'],
    batchSize: 1,
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

export type RouteMatch = { kind: 'route'; route: Route; pathParameters: Record<string, string> } | { kind: 'method_not_allowed'; allowed: HttpMethod[] } | { kind: 'not_found' };

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
