import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { findPrincipal } from '#shared/data/tokens';
import { handshakeToken } from '#shared/http/handshake';
import { instrumented } from '#shared/util/invocation';
import { describeError, logger } from '#shared/util/logger';
import { countMetric } from '#shared/util/metrics';

/**
 * The realtime API's `$connect` authorizer (REQUEST: WebSocket APIs have no
 * TOKEN authorizers). The token comes in `Authorization: Bearer` or, from a
 * browser, as the subprotocol pair `bearer`, `<token>`. A refused handshake
 * must answer 401, and API Gateway answers 401 only to an authorizer that
 * fails with exactly "Unauthorized" (a Deny policy would be 403).
 */
export const handler = instrumented(async (event: APIGatewayRequestAuthorizerEvent): Promise<APIGatewayAuthorizerResult> => {
  const token = handshakeToken(event.headers);
  let principal: Awaited<ReturnType<typeof findPrincipal>>;
  try {
    principal = token ? await findPrincipal(token) : undefined;
  } catch (error) {
    // A real failure (API Gateway answers 500): counted apart from refusals, which fail too (infra/monitoring.ts).
    countMetric('realtimeAuthorizerFailures');
    countMetric('attentionNeeded');
    logger.error('token lookup failed', describeError(error));
    throw error;
  }
  if (!principal) throw new Error('Unauthorized');
  return {
    principalId: principal.contactId,
    policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: event.methodArn }] },
    context: { accountId: principal.accountId, contactId: principal.contactId },
  };
});
