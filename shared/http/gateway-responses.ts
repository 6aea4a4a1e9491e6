import type { APIGatewayProxyResult } from 'aws-lambda';
import { gatewayCorsHeaders } from '#shared/http/cors';

/**
 * Errors API Gateway itself answers (before any handler runs), in the
 * API's error envelope (docs/api-conventions.md). The CDK stack installs these as gateway responses;
 * the local adapter answers with the same ones.
 */
export const gatewayResponses = {
  UNAUTHORIZED: {
    statusCode: 401,
    type: 'authentication_error',
    code: 'unauthorized',
    message: 'Invalid or missing bearer token',
    headers: { 'WWW-Authenticate': 'Bearer' },
  },
  ACCESS_DENIED: {
    statusCode: 401,
    type: 'authentication_error',
    code: 'unauthorized',
    message: 'Invalid or missing bearer token',
    headers: { 'WWW-Authenticate': 'Bearer' },
  },
  REQUEST_TOO_LARGE: {
    statusCode: 413,
    type: 'invalid_request_error',
    code: 'body_too_large',
    message: 'Request body is too large',
    headers: {},
  },
  THROTTLED: {
    statusCode: 429,
    type: 'rate_limit_error',
    code: 'rate_limited',
    message: 'Too many requests; retry after the number of seconds in Retry-After',
    // API Gateway's response header is a fixed value: a token bucket refilled every second frees a request within one.
    headers: { 'Retry-After': '1' },
  },
  // The account has no API key in a usage plan yet (docs/operations.md, Rate limits): an operator's step is missing.
  INVALID_API_KEY: {
    statusCode: 403,
    type: 'invalid_request_error',
    code: 'account_not_enabled',
    message: 'This account is not enabled for the API yet; its operator must set its rate limits',
    headers: {},
  },
  DEFAULT_4XX: {
    statusCode: undefined,
    type: 'invalid_request_error',
    code: 'bad_request',
    message: 'The request could not be processed',
    headers: {},
  },
  DEFAULT_5XX: {
    statusCode: undefined,
    type: 'api_error',
    code: 'internal_error',
    message: 'An internal error occurred',
    headers: {},
  },
} as const;

export type GatewayResponseType = keyof typeof gatewayResponses;

export const gatewayResponseBody = (type: GatewayResponseType) => {
  const { type: errorType, code, message } = gatewayResponses[type];
  return { error: { type: errorType, code, message } };
};

/**
 * `DEFAULT_5XX` stands for API Gateway's AUTHORIZER_FAILURE (the authorizer
 * threw or timed out), which falls back to DEFAULT_5XX with status 500.
 */
export function gatewayError(
  type: 'UNAUTHORIZED' | 'ACCESS_DENIED' | 'REQUEST_TOO_LARGE' | 'THROTTLED' | 'DEFAULT_5XX',
  requestId: string,
  origin?: string,
  headers: Record<string, string> = {},
): APIGatewayProxyResult {
  const definition = gatewayResponses[type];
  return {
    statusCode: definition.statusCode ?? 500,
    headers: {
      'Content-Type': 'application/json',
      'X-Request-Id': requestId,
      ...definition.headers,
      ...headers,
      ...gatewayCorsHeaders(origin),
    },
    body: JSON.stringify(gatewayResponseBody(type)),
  };
}
