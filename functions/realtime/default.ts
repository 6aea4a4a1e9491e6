import { touchConnection } from '#shared/data/connections';
import { callbackOf, connectionPrincipal, type WebSocketEvent } from '#shared/http/handshake';
import { postFrame } from '#shared/realtime/push';
import { instrumented } from '#shared/util/invocation';

const MAX_FRAME_CHARS = 1024;

/**
 * `$default`: every frame a client sends. The socket carries events to the
 * client; the one thing a client says is `{"action":"ping"}`, answered
 * `{"type":"pong"}`, which also keeps the connection's record alive.
 */
export const handler = instrumented(async (event: WebSocketEvent) => {
  const principal = connectionPrincipal(event);
  if (!principal) return { statusCode: 401 };
  const { connectionId } = event.requestContext;
  let action: unknown;
  try {
    // A ping is a few bytes: a longer frame is answered without being parsed.
    action = (event.body ?? '').length <= MAX_FRAME_CHARS ? (JSON.parse(event.body ?? '') as { action?: unknown }).action : undefined;
  } catch {
    action = undefined;
  }
  const frame =
    action === 'ping'
      ? { type: 'pong' }
      : {
          type: 'error',
          error: { type: 'invalid_request_error', code: 'unknown_action', message: 'Send {"action":"ping"}; events arrive on their own.' },
        };
  if (action === 'ping') await touchConnection(principal, connectionId);
  await postFrame(callbackOf(event), principal, connectionId, JSON.stringify(frame));
  return { statusCode: 200 };
});
