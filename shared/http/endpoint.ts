import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import * as v from 'valibot';
import type { Principal } from '#shared/data/tokens';
import type { MediaType } from '#shared/http/body';
import { notFound } from '#shared/errors';
import { badRequest } from '#shared/http/errors';
import type { PathId } from '#shared/http/path-ids';
import type { Hold } from '#shared/data/idempotency';
import { userScopedKey, withIdempotency } from '#shared/http/idempotency';
import { authenticate } from '#shared/http/authenticate';
import { errorEnvelope, header, parseInput, requestContext, type AuthedContext } from '#shared/http/middleware';
import { json } from '#shared/http/response';
import type { Schema } from '#shared/http/validation';
import { instrumented } from '#shared/util/invocation';

export interface EndpointInput<B, Q, P = undefined> {
  body: B;
  query: Q;
  /** The path's resource id, parsed (see `path` in the spec). */
  id: P;
  principal: Principal;
  /**
   * Present when the request carries an Idempotency-Key: this request's hold
   * on it. Every attempt of one request shares `generation` (ids derived
   * from it, `derivedId`, are the same on a retry) and sees the `steps` that
   * earlier attempts recorded as committed (`journalStep`).
   */
  idempotency?: Hold;
}

export interface Reply {
  status?: number;
  body: unknown;
}

export interface EndpointSpec<B, Q, P = undefined> {
  body?: Schema<B>;
  query?: Schema<Q>;
  /** The resource id in the path; a malformed one answers 404 before `run`. */
  path?: PathId<P>;
  /** Accepted body encodings (the messaging API takes both). */
  media?: readonly MediaType[];
  /**
   * Honour the Idempotency-Key header (creates). `per-user`: keys are the
   * token's user's (account and contact), so a replay never answers one user
   * with another's record.
   */
  idempotent?: boolean | 'per-user';
}

const noParameters = v.strictObject({});

function pathId<P>(path: PathId<P> | undefined, event: APIGatewayProxyEvent): P {
  if (!path) return undefined as P;
  const raw = event.pathParameters?.[path.name] ?? '';
  const id = path.parse(raw);
  if (id === undefined) throw notFound(path.resource, raw, path.name);
  return id;
}

/** The API's answer to every delete. */
export const deleted = (id: string | number): Reply => ({ body: { id, deleted: true } });

/**
 * Builds a thin API handler from the shared middleware (request id and logs,
 * error envelope, authentication, parsing and validation), then runs the
 * domain call and shapes the JSON response.
 */
export function endpoint<B = Record<string, never>, Q = Record<string, never>, P = undefined>(
  spec: EndpointSpec<B, Q, P>,
  run: (input: EndpointInput<B, Q, P>) => Promise<Reply>,
) {
  const core = async (event: APIGatewayProxyEvent, context: AuthedContext) => {
    const body = context.input!.body as B;
    const query = context.input!.query as Q;
    const principal = context.principal!;
    const input = { body, query, id: pathId(spec.path, event), principal };
    const execute = async (idempotency?: Hold) => {
      const reply = await run(idempotency ? { ...input, idempotency } : input);
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
