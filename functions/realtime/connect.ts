import { putConnection } from '#shared/data/connections';
import { hashToken } from '#shared/data/tokens';
import { acceptedProtocol, connectionPrincipal, handshakeToken, type WebSocketEvent } from '#shared/http/handshake';
import { instrumented } from '#shared/util/invocation';

/**
 * `$connect`: the authorizer named the user; the connection is kept, with
 * its token's hash, so the fan-out finds it and closes it once the token is
 * revoked.
 */
export const handler = instrumented(async (event: WebSocketEvent) => {
  const principal = connectionPrincipal(event);
  const token = handshakeToken(event.headers);
  if (!principal || !token) return { statusCode: 401 };
  await putConnection(principal, event.requestContext.connectionId, hashToken(token));
  const protocol = acceptedProtocol(event.headers);
  return { statusCode: 200, ...(protocol ? { headers: { 'Sec-WebSocket-Protocol': protocol } } : {}) };
});
