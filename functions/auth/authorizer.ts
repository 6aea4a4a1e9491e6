import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { findCaller } from '#shared/data/tokens';
import { authorizerContext, bearerToken } from '#shared/http/authenticate';
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
 * to any other. Whether the route takes this kind of credential (a user token
 * or a secret key, named in the context) is the handler's check: a 403 with
 * a code saying which, where a Deny could only say 403 Forbidden.
 *
 * An Allow names the account's API key (`usageIdentifierKey`): the usage plan
 * holding that key throttles the account, across both APIs (docs/operations.md, Rate limits).
 */
export const handler = instrumented(async (event: APIGatewayTokenAuthorizerEvent): Promise<APIGatewayAuthorizerResult> => {
  const token = bearerToken(event.authorizationToken);
  const caller = token ? await findCaller(token) : undefined;
  if (!caller) return policy('anonymous', 'Deny', wholeApi(event.methodArn));
  return {
    ...policy(caller.kind === 'user' ? caller.contactId : caller.keyId, 'Allow', wholeApi(event.methodArn)),
    usageIdentifierKey: usageKeyValue(caller.accountId),
    context: authorizerContext(caller),
  };
});

const policy = (principalId: string, effect: 'Allow' | 'Deny', resource: string): APIGatewayAuthorizerResult => ({
  principalId,
  policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: effect, Resource: resource }] },
});

/** `arn:...:apiId/stage/GET/v1/x` -> `arn:...:apiId/stage/*`: every method and path of this stage. */
const wholeApi = (methodArn: string) => `${methodArn.split('/').slice(0, 2).join('/')}/*`;
