import type middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { Caller } from '#shared/data/tokens';
import { corsHeaders } from '#shared/http/cors';
import { isForm, loadFormParser, parseBody, prototypeKeyIn, repeatedParameter, unknownParameter, type MediaType } from '#shared/http/body';
import { validate, type Schema } from '#shared/http/validation';
import { asApiError, internal } from '#shared/http/errors';
import { errorResponse } from '#shared/http/response';
import { describeError, logger } from '#shared/util/logger';

/** The invocation context, carrying who called (authenticate) and the validated input (parseInput). */
export type AuthedContext = Context & { caller?: Caller; input?: { body: unknown; query: unknown } };
export type Middleware = middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>;

/** A request header by name, whatever its case (API Gateway passes them as the client sent them). */
export const header = (event: { headers?: Record<string, string | undefined> | null }, name: string): string | undefined => {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(event.headers ?? {})) if (key.toLowerCase() === wanted) return value ?? undefined;
  return undefined;
};

const requestIdOf = (event: APIGatewayProxyEvent, context: Context) => event.requestContext?.requestId ?? context.awsRequestId;

/** Every response, success or error, carries X-Request-Id; every log line the same id. */
export const requestContext = (): Middleware => ({
  before: (request) => {
    logger.withContext({
      request_id: requestIdOf(request.event, request.context),
      method: request.event.httpMethod,
      path: request.event.path,
    });
  },
  after: (request) => completed(request),
  onError: (request) => completed(request),
});

/** Headers every response gets, success or error: its request id, and CORS when configured. */
function completed(request: middy.Request<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>) {
  const response = request.response!;
  response.headers = {
    ...response.headers,
    ...corsHeaders(header(request.event, 'origin')),
    'X-Request-Id': requestIdOf(request.event, request.context),
  };
  logger.info('request completed', { status: response.statusCode });
}

/** Maps typed errors to the error envelope (docs/api-conventions.md); anything unexpected is logged and hidden. */
export const errorEnvelope = (): Middleware => ({
  onError: (request) => {
    const error = request.error;
    const answered = asApiError(error);
    if (answered) {
      request.response = errorResponse(answered);
      return;
    }
    logger.error('unhandled error', describeError(error));
    request.response = errorResponse(internal());
  },
});

/**
 * Parses the body (form or JSON, as the endpoint accepts) and validates body
 * and query with the endpoint's strict schemas: a bad input becomes the
 * documented 4xx (docs/api-conventions.md) before any domain code runs.
 */
export const parseInput = (spec: {
  body: Schema<unknown>;
  query: Schema<unknown>;
  media: readonly MediaType[];
  formMaps?: readonly string[];
  entryLists?: readonly string[];
}): Middleware => ({
  before: async (request) => {
    const { event } = request;
    const contentType = header(event, 'content-type');
    if (isForm(contentType) && spec.media.includes('form')) await loadFormParser();
    const raw = parseBody(
      event.body,
      event.isBase64Encoded,
      contentType,
      spec.media,
      header(event, 'content-encoding'),
      spec.formMaps,
      spec.entryLists,
    );
    const queryNames = [...Object.keys(event.queryStringParameters ?? {}), ...Object.keys(event.multiValueQueryStringParameters ?? {})];
    const forbidden = prototypeKeyIn(queryNames);
    if (forbidden !== undefined) throw unknownParameter(forbidden, 'query');
    const input = {
      body: validate(spec.body, raw, 'body'),
      query: validate(spec.query, event.queryStringParameters ?? {}, 'query'),
    };
    // API Gateway hands over the last of a repeated parameter: which one the client meant is unknown, as for a typo.
    const repeated = Object.entries(event.multiValueQueryStringParameters ?? {}).find(([, values]) => (values?.length ?? 0) > 1);
    if (repeated) throw repeatedParameter(repeated[0]);
    (request.context as AuthedContext).input = input;
  },
});
