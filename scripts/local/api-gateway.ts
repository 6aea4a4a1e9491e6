import { randomUUID } from 'node:crypto';
import type { APIGatewayAuthorizerResult, APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { gatewayError } from '#shared/http/gateway-responses';
import { header } from '#shared/http/middleware';
import { corsOrigins, preflightHeaders } from '#shared/http/cors';
import { AUTHORIZATION_PATTERN } from '#shared/data/tokens';
import { apiMethods, authorizer, DEFAULT_TIMEOUT_SECONDS, fallback, resolveRoute, STAGE_NAME, type ApiName } from '#shared/routes';
import { invokeSource, type Invoker } from './lambda.ts';
import { rateLimitHeaders, type AccountRateLimiter } from './rate-limiter.ts';

export interface HttpRequest {
  method: string;
  /** Path and query string, as in an HTTP request line. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** API Gateway's REST payload limit is 10 MB; the handlers enforce the API's smaller one (docs/api-conventions.md, Limits). */
const GATEWAY_MAX_BODY = 10 * 1024 * 1024;

/** A loop rather than `/\/+$/`, which retries from every slash of a long run of them that does not end the path: quadratic. */
function withoutTrailingSlashes(path: string): string {
  let end = path.length;
  while (end > 0 && path[end - 1] === '/') end--;
  return path.slice(0, end);
}

/**
 * Emulates API Gateway REST with proxy integrations: route from the shared
 * route table, run the TOKEN authorizer, build the v1 proxy event, invoke the
 * real handler. Both the local server and the in-process tests go through it.
 * With a `limiter`, an account over its rate limit gets the usage plan's 429.
 */
export async function dispatch(
  api: ApiName,
  request: HttpRequest,
  run: Invoker = invokeSource,
  limiter?: AccountRateLimiter,
): Promise<APIGatewayProxyResult> {
  const invoke = async <T>(handler: string, event: unknown, timeoutSeconds = DEFAULT_TIMEOUT_SECONDS) =>
    (await run({ handler, api }, event, timeoutSeconds)) as T;
  const requestId = randomUUID();
  const url = new URL(request.url, 'http://localhost');
  // Path parameters are decoded once, segment by segment, by the route matcher.
  const path = withoutTrailingSlashes(url.pathname) || '/';
  const event = proxyEvent(api, request, url, path, requestId);
  const origin = header(event, 'origin');
  if (Buffer.byteLength(request.body) > GATEWAY_MAX_BODY) return gatewayError('REQUEST_TOO_LARGE', requestId, origin);
  // With CORS configured, every resource has an OPTIONS method answering the preflight (no authorizer), as on AWS.
  if (event.httpMethod === 'OPTIONS' && corsOrigins().length > 0) {
    return { statusCode: 204, headers: { ...preflightHeaders(origin, apiMethods(api)), 'X-Request-Id': requestId }, body: '' };
  }

  const match = resolveRoute(api, request.method.toUpperCase(), path);
  if (match.kind !== 'route') return invoke(fallback.handler, { ...event, resource: '/{proxy+}' });

  const token = header(event, 'authorization');
  // API Gateway's identity validation: a header that cannot hold a token never reaches the authorizer.
  if (!token || !AUTHORIZATION_PATTERN.test(token)) return gatewayError('UNAUTHORIZED', requestId, origin);
  let auth: APIGatewayAuthorizerResult;
  try {
    auth = await invoke(authorizer.handler, {
      type: 'TOKEN',
      authorizationToken: token,
      methodArn: `arn:aws:execute-api:local:000000000000:${api}/prod/${match.route.method}${match.route.path}`,
    });
  } catch {
    // As API Gateway: an authorizer that fails is AUTHORIZER_FAILURE, a 500, never a verdict on the token.
    return gatewayError('DEFAULT_5XX', requestId, origin);
  }
  // An explicit Deny anywhere in the policy wins, as in API Gateway.
  if (auth.policyDocument.Statement.some((s) => s.Effect === 'Deny')) return gatewayError('ACCESS_DENIED', requestId, origin);
  // The usage plan's place: after the authorizer named the account, before the integration runs.
  const accountId = auth.context?.accountId;
  let quota: Record<string, string> = {};
  if (limiter && typeof accountId === 'string') {
    const admission = await limiter.admit(accountId);
    quota = rateLimitHeaders(admission.quota);
    if (!admission.admitted) {
      return gatewayError('THROTTLED', requestId, origin, { 'Retry-After': String(admission.retryAfterSeconds), ...quota });
    }
  }
  const result = await invoke<APIGatewayProxyResult>(
    match.route.handler,
    {
      ...event,
      resource: match.route.path,
      pathParameters: Object.keys(match.pathParameters).length ? match.pathParameters : null,
      requestContext: {
        ...event.requestContext,
        resourcePath: match.route.path,
        authorizer: { ...auth.context, principalId: auth.principalId },
      },
    },
    match.route.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS,
  );
  // Every answer counted against the account tells it where its budget stands, errors included.
  return Object.keys(quota).length ? { ...result, headers: { ...result.headers, ...quota } } : result;
}

function proxyEvent(api: ApiName, request: HttpRequest, url: URL, path: string, requestId: string): APIGatewayProxyEvent {
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    const values = Array.isArray(value) ? value : [value];
    headers[name] = values.join(',');
    multiValueHeaders[name] = values;
  }
  // Null-prototype maps: a parameter named __proto__ stays a parameter, as in the JSON event Lambda receives.
  const query: Record<string, string> = Object.create(null);
  const multiQuery: Record<string, string[]> = Object.create(null);
  for (const [name, value] of url.searchParams) {
    query[name] = value; // API Gateway keeps the last value of a repeated parameter
    (multiQuery[name] ??= []).push(value);
  }
  const hasQuery = Object.keys(query).length > 0;
  return {
    resource: path,
    path,
    httpMethod: request.method.toUpperCase(),
    headers,
    multiValueHeaders,
    queryStringParameters: hasQuery ? query : null,
    multiValueQueryStringParameters: hasQuery ? multiQuery : null,
    pathParameters: null,
    stageVariables: null,
    body: request.body === '' ? null : request.body,
    isBase64Encoded: false,
    requestContext: {
      accountId: '000000000000',
      apiId: api,
      authorizer: null,
      protocol: 'HTTP/1.1',
      httpMethod: request.method.toUpperCase(),
      identity: { sourceIp: '127.0.0.1' } as APIGatewayProxyEvent['requestContext']['identity'],
      path: `/prod${path}`,
      stage: STAGE_NAME,
      requestId,
      requestTimeEpoch: Date.now(),
      resourceId: 'local',
      resourcePath: path,
    },
  };
}
