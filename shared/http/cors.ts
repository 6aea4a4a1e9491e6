/**
 * CORS for both APIs (docs/api-conventions.md, CORS): CORS_ORIGINS lists the
 * allowed origins, comma-separated, or `*`; empty or unset adds no CORS
 * header anywhere. The functions add the headers to their own responses; the
 * preflight answers come from API Gateway on AWS (infra/api.ts) and from the
 * local adapter, both built from the values below.
 */
export const CORS_ENV = 'CORS_ORIGINS';

/** Request headers a browser may send (preflight Access-Control-Allow-Headers). */
export const CORS_ALLOW_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key'];
/** Response headers a browser script may read besides the CORS-safelisted ones. */
export const CORS_EXPOSE_HEADERS = [
  'X-Request-Id',
  'Idempotent-Replayed',
  'WWW-Authenticate',
  'Allow',
  'Retry-After',
  // Sent by `npm start`'s gateway only (docs/operations.md, Rate limits); exposed everywhere, as the list is one.
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
];
/** How long a browser may keep a preflight answer. */
export const CORS_MAX_AGE_SECONDS = 600;

export class CorsOriginsError extends Error {
  override name = 'CorsOriginsError';
}

const ORIGIN = /^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$/;

/** The allowed origins, checked: each `*` or `scheme://host[:port]` with no path or trailing slash. */
export function corsOrigins(raw: string | undefined = process.env[CORS_ENV]): string[] {
  const origins = (raw ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean);
  const bad = origins.find((o) => o !== '*' && !ORIGIN.test(o));
  if (bad !== undefined) throw new CorsOriginsError(`${CORS_ENV}: '${bad}' is not an origin (scheme://host[:port], or *)`);
  return origins;
}

/** The headers for a response to a request from `origin` (the Origin header, when sent). */
export function corsHeaders(origin: string | undefined, allowed: readonly string[] = corsOrigins()): Record<string, string> {
  if (allowed.length === 0) return {};
  const common = { 'Access-Control-Expose-Headers': CORS_EXPOSE_HEADERS.join(', ') };
  if (allowed.includes('*')) return { 'Access-Control-Allow-Origin': '*', ...common };
  // The answer depends on the Origin header, so caches must keep one per origin.
  if (origin === undefined || !allowed.includes(origin)) return { Vary: 'Origin' };
  return { 'Access-Control-Allow-Origin': origin, Vary: 'Origin', ...common };
}

/** A preflight answer (OPTIONS) for a path taking `methods`; only headers, no body. */
export function preflightHeaders(origin: string | undefined, methods: readonly string[], allowed: readonly string[] = corsOrigins()) {
  const headers = corsHeaders(origin, allowed);
  if (!headers['Access-Control-Allow-Origin']) return headers;
  return {
    ...headers,
    // Joined as API Gateway's preflight joins them.
    'Access-Control-Allow-Methods': [...methods, 'OPTIONS'].join(','),
    'Access-Control-Allow-Headers': CORS_ALLOW_HEADERS.join(','),
    'Access-Control-Max-Age': String(CORS_MAX_AGE_SECONDS),
  };
}

/**
 * API Gateway's own error responses (401, 413, 429, 5xx) cannot test the
 * Origin header against a list: with one allowed origin (or `*`) they name it,
 * with several they echo the request's Origin. They carry no data, only the
 * error envelope. Undefined: no CORS headers at all.
 */
export function gatewayAllowOrigin(allowed: readonly string[]): { static: string } | 'echo' | undefined {
  if (allowed.length === 0) return undefined;
  if (allowed.includes('*')) return { static: '*' };
  return allowed.length === 1 ? { static: allowed[0]! } : 'echo';
}

/** The local adapter's version of the headers above. */
export function gatewayCorsHeaders(origin: string | undefined, allowed: readonly string[] = corsOrigins()): Record<string, string> {
  const rule = gatewayAllowOrigin(allowed);
  if (rule === undefined) return {};
  const value = rule === 'echo' ? origin : rule.static;
  // An echoed origin makes the answer depend on the request's Origin: caches must keep one per origin.
  const vary: Record<string, string> = rule === 'echo' ? { Vary: 'Origin' } : {};
  return value === undefined
    ? vary
    : { 'Access-Control-Allow-Origin': value, 'Access-Control-Expose-Headers': CORS_EXPOSE_HEADERS.join(', '), ...vary };
}
