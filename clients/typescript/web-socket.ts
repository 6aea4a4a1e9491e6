/**
 * What the realtime helper needs of a WebSocket: the standard API, as
 * browsers, Node 22 and later, and the `ws` package all provide it.
 */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'open' | 'message' | 'close' | 'error', listener: (event: unknown) => void): void;
}

export type WebSocketConstructor = new (url: string, protocols?: string | string[]) => WebSocketLike;

/** The class given, else the runtime's own, which Node before 22 lacks: there the app passes one (e.g. the `ws` package's). */
export function webSocketClass(given: WebSocketConstructor | undefined): WebSocketConstructor {
  const found = given ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
  if (!found) throw new Error('this runtime has no WebSocket: pass one as the WebSocket option');
  return found;
}
