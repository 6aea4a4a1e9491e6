import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { findPrincipal } from '#shared/data/tokens';
import { bearerToken } from '#shared/http/middleware';
import { instrumented } from '#shared/util/invocation';

/**
 * API Gateway TOKEN authorizer. Throwing 'Unauthorized' is how API Gateway
 * is told to answer 401 (shaped by the stack's gateway responses).
 */
export const handler = instrumented(async (event: APIGatewayTokenAuthorizerEvent): Promise<APIGatewayAuthorizerResult> => {
  const token = bearerToken(event.authorizationToken);
  const principal = token ? await findPrincipal(token) : undefined;
  if (!principal) throw new Error('Unauthorized');
  return {
    principalId: principal.contactId,
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: event.methodArn }],
    },
    context: { accountId: principal.accountId, contactId: principal.contactId },
  };
});
