import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import * as v from 'valibot';
import type { Caller, Principal } from '#shared/data/tokens';
import type { MediaType } from '#shared/http/body';
import type { PathId } from '#shared/http/path-ids';
import type { Hold } from '#shared/data/idempotency';
import type { Idempotency } from '#shared/http/idempotency';
import { authenticate, type CredentialKind } from '#shared/http/authenticate';
import { errorEnvelope, parseInput, requestContext, type AuthedContext } from '#shared/http/middleware';
import { json } from '#shared/http/response';
import type { Schema } from '#shared/http/validation';
import { instrumented } from '#shared/util/invocation';

type CallerOf<K extends CredentialKind> = K extends 'user'
  ? Extract<Caller, { kind: 'user' }>
  : K extends 'secret'
    ? Extract<Caller, { kind: 'secret' }>
    : Caller;

export interface EndpointInput<B, Q, P = undefined, K extends CredentialKind = 'user'> {
  body: B;
  query: Q;
  /** The path's resource id, parsed (see `path` in the spec). */
  id: P;
  /** Who called, with the credential kind the route takes. */
  caller: CallerOf<K>;
  /** The user, on routes that take a user token. */
  principal: K extends 'user' ? Principal : undefined;
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

export interface EndpointSpec<B, Q, P = undefined, K extends CredentialKind = 'user'> {
  /** The credential the route takes (the route table says the same: a test holds the two equal). */
  credential: K;
  body?: Schema<B>;
  query?: Schema<Q>;
  /** The resource id(s) in the path; a malformed one answers 404 before `run`. */
  path?: PathId<P>;
  /** Accepted body encodings (the messaging API takes both). */
  media?: readonly MediaType[];
  /** Body parameters whose keys are names, even of digits, in a form body (`reactions[100][]`): see parseForm. */
  formMaps?: readonly string[];
  /** Body lists whose entries the endpoint judges one by one (`emails`): a string entry that is not Unicode text is that entry's error. */
  entryLists?: readonly string[];
  /** Honour the Idempotency-Key header (creates): `idempotent()` from `#shared/http/idempotency`. */
  idempotent?: Idempotency;
  /**
   * Fields of the answer that hold a credential (a token, a webhook secret):
   * the idempotency record keeps them sealed (shared/util/sealing.ts), and a
   * replay opens them, so it answers what the first request answered. The
   * route seals (`seals` in its row).
   */
  secretFields?: readonly string[];
}

const noParameters = v.strictObject({});

function pathId<P>(path: PathId<P> | undefined, event: APIGatewayProxyEvent): P {
  if (!path) return undefined as P;
  return path.read(event.pathParameters ?? {});
}

/** The API's answer to every delete. */
export const deleted = (id: string | number): Reply => ({ body: { id, deleted: true } });

/**
 * Builds a thin API handler from the shared middleware (request id and logs,
 * error envelope, authentication, parsing and validation), then runs the
 * domain call and shapes the JSON response.
 */
export function endpoint<B = Record<string, never>, Q = Record<string, never>, P = undefined, K extends CredentialKind = 'user'>(
  spec: EndpointSpec<B, Q, P, K>,
  run: (input: EndpointInput<B, Q, P, K>) => Promise<Reply>,
) {
  const core = async (event: APIGatewayProxyEvent, context: AuthedContext) => {
    const body = context.input!.body as B;
    const query = context.input!.query as Q;
    const caller = context.caller! as CallerOf<K>;
    const principal = (caller.kind === 'user' ? { accountId: caller.accountId, contactId: caller.contactId } : undefined) as EndpointInput<
      B,
      Q,
      P,
      K
    >['principal'];
    const input: EndpointInput<B, Q, P, K> = { body, query, id: pathId(spec.path, event), caller, principal };
    const execute = async (idempotency?: Hold) => {
      const reply = await run(idempotency ? { ...input, idempotency } : input);
      return json(reply.status ?? 200, reply.body);
    };
    if (!spec.idempotent) return execute();
    return spec.idempotent.run({ event, accountId: caller.accountId, principal, body }, execute, spec.secretFields);
  };

  const handler = instrumented(
    middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
      .use(requestContext())
      .use(errorEnvelope())
      .use(authenticate(spec.credential))
      .use(
        parseInput({
          body: spec.body ?? noParameters,
          query: spec.query ?? noParameters,
          media: spec.media ?? ['json'],
          formMaps: spec.formMaps,
          entryLists: spec.entryLists,
        }),
      )
      .handler((event, context) => core(event, context as AuthedContext)),
  );
  return Object.assign(handler, { credential: spec.credential });
}
