import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { findPrincipal } from '#shared/data/tokens';
import { bearerToken } from '#shared/http/middleware';
import { instrumented } from '#shared/util/invocation';

/**
 * API Gateway TOKEN authorizer. An unknown token gets an explicit Deny (API
 * Gateway answers ACCESS_DENIED, shaped by the stack's gateway responses like
 * UNAUTHORIZED): a refused token is an answer, not a function error, so the
 * function's error alarm only fires on real failures.
 */
export const handler = instrumented(async (event: APIGatewayTokenAuthorizerEvent): Promise<APIGatewayAuthorizerResult> => {
  const token = bearerToken(event.authorizationToken);
  const principal = token ? await findPrincipal(token) : undefined;
  if (!principal) return policy('anonymous', 'Deny', wholeApi(event.methodArn));
  return {
    ...policy(principal.contactId, 'Allow', event.methodArn),
    context: { accountId: principal.accountId, contactId: principal.contactId },
  };
});

const policy = (principalId: string, effect: 'Allow' | 'Deny', resource: string): APIGatewayAuthorizerResult => ({
  principalId,
  policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: effect, Resource: resource }] },
});

/** `arn:...:apiId/stage/GET/v1/x` -> `arn:...:apiId/stage/*`: a refused token is refused everywhere. */
const wholeApi = (methodArn: string) => `${methodArn.split('/').slice(0, 2).join('/')}/*`;
