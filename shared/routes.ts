/**
 * The one route table. The CDK stack creates one Lambda and one API Gateway
 * method per row; the local server routes real HTTP requests with the same
 * rows, so the two cannot drift. The rows are kept by what they serve
 * (shared/routes/): this module puts them together, and is what the stack,
 * the local server and the fallback function import.
 */
import { emailRoutes } from '#shared/routes/email';
import { messagingRoutes } from '#shared/routes/messaging';
import { platformRoutes } from '#shared/routes/platform';
import type { ApiName, HttpMethod, Route, TableAccess } from '#shared/routes/route';

export type { ApiName, Credential, FileAccess, HttpMethod, QueueName, Route, TableAccess } from '#shared/routes/route';
export { realtime, type RealtimeRoute } from '#shared/routes/realtime';
export { schedules, type Schedule } from '#shared/routes/schedules';
export { streams, type StreamConsumer } from '#shared/routes/streams';
export { workers, type Worker } from '#shared/routes/workers';

/** The API Gateway stage both APIs deploy to (and the local server reports in its events). */
export const STAGE_NAME = 'prod';
/** Every function's memory, in MB. */
export const MEMORY_MB = 256;
/** A function's timeout unless its row says otherwise. */
export const DEFAULT_TIMEOUT_SECONDS = 10;

export const routes: readonly Route[] = [...messagingRoutes, ...platformRoutes, ...emailRoutes];

/** The methods an API's routes use (its CORS preflight allows these). */
export const apiMethods = (api: ApiName): HttpMethod[] => [...new Set(routes.filter((r) => r.api === api).map((r) => r.method))];

/** Verifies bearer tokens for every route above (API Gateway Lambda authorizer). */
export const authorizer = { handler: 'auth/authorizer', table: 'read' as TableAccess };

/** Answers 404 for unknown paths and 405 for known paths with another method. */
export const fallback = { handler: 'http/fallback' };

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
