import { putConnection } from '#shared/data/connections';
import { acceptedProtocol, connectionPrincipal, type WebSocketEvent } from '#shared/realtime/handshake';
import { instrumented } from '#shared/util/invocation';

/** `$connect`: the authorizer named the user; the connection is kept so the fan-out finds it. */
export const handler = instrumented(async (event: WebSocketEvent) => {
  const principal = connectionPrincipal(event);
  if (!principal) return { statusCode: 401 };
  await putConnection(principal, event.requestContext.connectionId);
  const protocol = acceptedProtocol(event.headers);
  return { statusCode: 200, ...(protocol ? { headers: { 'Sec-WebSocket-Protocol': protocol } } : {}) };
});
