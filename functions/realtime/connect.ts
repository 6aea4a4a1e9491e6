import { putConnection } from '#shared/data/connections';
import { hashToken } from '#shared/data/tokens';
import { resumePoint } from '#shared/events/resume';
import { acceptedProtocol, connectionPrincipal, handshakeToken, type WebSocketEvent } from '#shared/http/handshake';
import { instrumented } from '#shared/util/invocation';

/**
 * `$connect`: the authorizer named the user; the connection is kept, with
 * its token's hash, so the fan-out finds it and closes it once the token is
 * revoked. `?after=<event id>` is checked here, and the connection's
 * insert makes the realtime consumer replay what came after it (or, for a
 * bad cursor, send the error and close).
 */
export const handler = instrumented(async (event: WebSocketEvent) => {
  const principal = connectionPrincipal(event);
  const token = handshakeToken(event.headers);
  if (!principal || !token) return { statusCode: 401 };
  const resume = await resumePoint(principal, event.queryStringParameters?.after);
  await putConnection(principal, event.requestContext.connectionId, hashToken(token), resume);
  const protocol = acceptedProtocol(event.headers);
  return { statusCode: 200, ...(protocol ? { headers: { 'Sec-WebSocket-Protocol': protocol } } : {}) };
});
