import { findPrincipal, type Principal } from '#shared/data/tokens';
import { unauthorized } from '#shared/http/errors';
import { header, type AuthedContext, type Middleware } from '#shared/http/middleware';
import { logger } from '#shared/util/logger';

// Kept apart from the other middleware because it reads the token table: the fallback handler
// (unknown routes, answered before authentication) then loads no DynamoDB client at all.

export const bearerToken = (authorization: string | undefined): string | undefined => {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  return match?.[1];
};

/**
 * API Gateway's Lambda authorizer (and the local adapter, which runs it too)
 * has already resolved the token when its context is present. Without it
 * (LocalStack's free plan ignores authorizers) the same lookup runs here, so
 * a handler is never reachable unauthenticated.
 */
export const authenticate = (): Middleware => ({
  before: async (request) => {
    const fromAuthorizer = request.event.requestContext?.authorizer as Record<string, unknown> | null | undefined;
    let principal: Principal | undefined;
    if (typeof fromAuthorizer?.accountId === 'string' && typeof fromAuthorizer.contactId === 'string') {
      principal = { accountId: fromAuthorizer.accountId, contactId: fromAuthorizer.contactId };
    } else {
      const token = bearerToken(header(request.event, 'authorization'));
      principal = token ? await findPrincipal(token) : undefined;
    }
    if (!principal) throw unauthorized();
    (request.context as AuthedContext).principal = principal;
    logger.withContext({ account_id: principal.accountId });
  },
});
