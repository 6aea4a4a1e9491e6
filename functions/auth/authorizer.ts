import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { findPrincipal } from '#shared/data/tokens';
import { bearerToken } from '#shared/http/authenticate';
import { usageKeyValue } from '#shared/rate-limits';
import { instrumented } from '#shared/util/invocation';

/**
 * API Gateway TOKEN authorizer. An unknown token gets an explicit Deny (API
 * Gateway answers ACCESS_DENIED, shaped by the stack's gateway responses like
 * UNAUTHORIZED): a refused token is an answer, not a function error, so the
 * function's error alarm only fires on real failures.
 *
 * Both answers cover the whole API, not the method asked about: API Gateway
 * caches the policy per token (AUTH_CACHE_SECONDS) and applies the cached one
 * to every route, so an Allow for one method would deny the token's next call
 * to any other. A token's rights do not depend on the route.
 *
 * An Allow names the account's API key (`usageIdentifierKey`): the usage plan
 * holding that key throttles the account, across both APIs (docs/operations.md, Rate limits).
 */
export const handler = instrumented(async (event: APIGatewayTokenAuthorizerEvent): Promise<APIGatewayAuthorizerResult> => {
  const token = bearerToken(event.authorizationToken);
  const principal = token ? await findPrincipal(token) : undefined;
  if (!principal) return policy('anonymous', 'Deny', wholeApi(event.methodArn));
  return {
    ...policy(principal.contactId, 'Allow', wholeApi(event.methodArn)),
    usageIdentifierKey: usageKeyValue(principal.accountId),
    context: { accountId: principal.accountId, contactId: principal.contactId },
  };
});

const policy = (principalId: string, effect: 'Allow' | 'Deny', resource: string): APIGatewayAuthorizerResult => ({
  principalId,
  policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: effect, Resource: resource }] },
});

/** `arn:...:apiId/stage/GET/v1/x` -> `arn:...:apiId/stage/*`: every method and path of this stage. */
const wholeApi = (methodArn: string) => `${methodArn.split('/').slice(0, 2).join('/')}/*`;
