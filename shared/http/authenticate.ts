import { findCaller, type Caller } from '#shared/data/tokens';
import { ApiError, unauthorized } from '#shared/http/errors';
import { header, type AuthedContext, type Middleware } from '#shared/http/middleware';
import { logger } from '#shared/util/logger';

// Kept apart from the other middleware because it reads the credential table: the fallback handler
// (unknown routes, answered before authentication) then loads no DynamoDB client at all.

/** Which credential a route takes: a user token, the account's secret key, or either. */
export type CredentialKind = 'user' | 'secret' | 'any';

export const bearerToken = (authorization: string | undefined): string | undefined => {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  return match?.[1];
};

/** What the authorizer hands the handlers (API Gateway passes only strings, numbers and booleans). */
export const authorizerContext = (caller: Caller): Record<string, string> =>
  caller.kind === 'user'
    ? { kind: 'user', accountId: caller.accountId, contactId: caller.contactId }
    : { kind: 'secret', accountId: caller.accountId, keyId: caller.keyId };

/** The caller the authorizer named, or undefined when its context holds none. */
export function callerFromContext(context: Record<string, unknown> | null | undefined): Caller | undefined {
  if (typeof context?.accountId !== 'string') return undefined;
  if (context.kind === 'secret')
    return typeof context.keyId === 'string' ? { kind: 'secret', accountId: context.accountId, keyId: context.keyId } : undefined;
  return typeof context.contactId === 'string' ? { kind: 'user', accountId: context.accountId, contactId: context.contactId } : undefined;
}

const wrongCredential = (wanted: 'user' | 'secret') =>
  wanted === 'secret'
    ? new ApiError(403, 'secret_key_required', "This endpoint takes the account's secret key (sk_...), not a user token")
    : new ApiError(403, 'user_token_required', 'This endpoint takes a user token (tok_...), not a secret key');

/**
 * API Gateway's Lambda authorizer (and the local adapter, which runs it too)
 * has already resolved the credential when its context is present. Without
 * it (LocalStack's free plan ignores authorizers) the same lookup runs here,
 * so a handler is never reachable unauthenticated. The authorizer allows any
 * live credential (its answer is cached per token for the whole API); the
 * route's own kind is checked here.
 */
export const authenticate = (kind: CredentialKind): Middleware => ({
  before: async (request) => {
    let caller = callerFromContext(request.event.requestContext?.authorizer as Record<string, unknown> | null | undefined);
    if (!caller) {
      const token = bearerToken(header(request.event, 'authorization'));
      caller = token ? await findCaller(token) : undefined;
    }
    if (!caller) throw unauthorized();
    if (kind !== 'any' && caller.kind !== kind) throw wrongCredential(kind);
    (request.context as AuthedContext).caller = caller;
    logger.withContext({ account_id: caller.accountId });
  },
});
