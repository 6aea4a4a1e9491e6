import { deleteConnection } from '#shared/data/connections';
import { connectionPrincipal, type WebSocketEvent } from '#shared/http/handshake';
import { instrumented } from '#shared/util/invocation';

/** `$disconnect` (best effort on API Gateway: a connection it never reports leaves by TTL or on its first GoneException). */
export const handler = instrumented(async (event: WebSocketEvent) => {
  const principal = connectionPrincipal(event);
  if (principal) await deleteConnection(principal, event.requestContext.connectionId);
  return { statusCode: 200 };
});
