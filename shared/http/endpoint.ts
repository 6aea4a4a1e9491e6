import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import * as z from 'zod';
import type { Principal } from '#shared/data/tokens';
import type { MediaType } from '#shared/http/body';
import { badRequest } from '#shared/http/errors';
import { userScopedKey, withIdempotency } from '#shared/http/idempotency';
import { authenticate, errorEnvelope, header, parseInput, requestContext, type AuthedContext } from '#shared/http/middleware';
import { json } from '#shared/http/response';
import { instrumented } from '#shared/util/invocation';

export interface EndpointInput<B, Q> {
  body: B;
  query: Q;
  pathId: string;
  principal: Principal;
}

export interface Reply {
  status?: number;
  body: unknown;
}

export interface EndpointSpec<B, Q> {
  body?: z.ZodType<B>;
  query?: z.ZodType<Q>;
  /** Accepted body encodings (the messaging API takes both). */
  media?: readonly MediaType[];
  /**
   * Honour the Idempotency-Key header (creates). `per-user`: keys are the
   * token's user's (account and contact), so a replay never answers one user
   * with another's record.
   */
  idempotent?: boolean | 'per-user';
}

const noParameters = z.strictObject({});

/** The contract's answer to every delete. */
export const deleted = (id: string | number): Reply => ({ body: { id, deleted: true } });

/**
 * Builds a thin API handler from the shared middleware (request id and logs,
 * error envelope, authentication, parsing and validation), then runs the
 * domain call and shapes the JSON response.
 */
export function endpoint<B = Record<string, never>, Q = Record<string, never>>(
  spec: EndpointSpec<B, Q>,
  run: (input: EndpointInput<B, Q>) => Promise<Reply>,
) {
  const core = async (event: APIGatewayProxyEvent, context: AuthedContext) => {
    const body = context.input!.body as B;
    const query = context.input!.query as Q;
    const principal = context.principal!;
    const input = { body, query, pathId: event.pathParameters?.id ?? '', principal };
    const execute = async () => {
      const reply = await run(input);
      return json(reply.status ?? 200, reply.body);
    };
    if (!spec.idempotent) return execute();
    const key = header(event, 'idempotency-key');
    if (key === undefined) return execute();
    if (key.length === 0 || key.length > 255) {
      throw badRequest('Idempotency-Key must be 1 to 255 characters', 'Idempotency-Key');
    }
    const scoped = spec.idempotent === 'per-user' ? userScopedKey(principal, key) : key;
    return withIdempotency(principal.accountId, scoped, JSON.stringify([event.httpMethod, event.path, body]), execute);
  };

  return instrumented(
    middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
      .use(requestContext())
      .use(errorEnvelope())
      .use(authenticate())
      .use(parseInput({ body: spec.body ?? noParameters, query: spec.query ?? noParameters, media: spec.media ?? ['json'] }))
      .handler((event, context) => core(event, context as AuthedContext)),
  );
}
