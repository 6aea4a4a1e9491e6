import type { Principal } from '#shared/data/tokens';
import { bearerToken } from '#shared/http/authenticate';
import { header } from '#shared/http/middleware';

/**
 * What API Gateway hands the realtime routes: the WebSocket event, with the
 * `$connect` request's headers and, once the authorizer allowed it, its
 * context on every route of that connection.
 */
export interface WebSocketEvent {
  headers?: Record<string, string | undefined> | null;
  /** `$connect`: the URL's query (`?after=<event id>` resumes from the user's feed). */
  queryStringParameters?: Record<string, string | undefined> | null;
  body?: string | null;
  requestContext: {
    routeKey: string;
    connectionId: string;
    domainName: string;
    stage: string;
    authorizer?: Record<string, unknown> | null;
  };
}

/** A browser cannot set headers on a WebSocket: it offers the subprotocols `bearer` and the token instead. */
export const BEARER_PROTOCOL = 'bearer';

const offeredProtocols = (headers: WebSocketEvent['headers']) =>
  (header({ headers }, 'sec-websocket-protocol') ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);

/** The token of a handshake: `Authorization: Bearer <token>`, or the subprotocol pair `bearer`, `<token>`. */
export function handshakeToken(headers: WebSocketEvent['headers']): string | undefined {
  const fromHeader = bearerToken(header({ headers }, 'authorization'));
  if (fromHeader) return fromHeader;
  const protocols = offeredProtocols(headers);
  const at = protocols.findIndex((p) => p.toLowerCase() === BEARER_PROTOCOL);
  return at >= 0 ? protocols[at + 1] : undefined;
}

/** The subprotocol the handshake's answer must name: a browser closes a socket whose offered protocol was not accepted. */
export const acceptedProtocol = (headers: WebSocketEvent['headers']) =>
  offeredProtocols(headers).some((p) => p.toLowerCase() === BEARER_PROTOCOL) ? BEARER_PROTOCOL : undefined;

/** The connection's user, as the `$connect` authorizer named it. */
export function connectionPrincipal(event: WebSocketEvent): Principal | undefined {
  const context = event.requestContext.authorizer;
  return typeof context?.accountId === 'string' && typeof context.contactId === 'string'
    ? { accountId: context.accountId, contactId: context.contactId }
    : undefined;
}

/** Where a route posts to its own connection: the stage's `@connections` API (the local server's under npm start). */
export const callbackOf = (event: WebSocketEvent) =>
  process.env.REALTIME_ENDPOINT || `https://${event.requestContext.domainName}/${event.requestContext.stage}`;
