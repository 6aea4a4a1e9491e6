import type { TableAccess } from '#shared/routes/route';

/**
 * The realtime WebSocket API: one Lambda per route, as for the REST APIs.
 * API Gateway runs `authorizer` on `$connect` (a REQUEST authorizer: the
 * token comes in `Authorization` or in the `bearer`, `<token>` subprotocol
 * pair); `npm start` serves the same routes with the same handlers.
 */
export interface RealtimeRoute {
  route: '$connect' | '$disconnect' | '$default';
  handler: string;
  table: TableAccess;
  /** Posts to connections (execute-api:ManageConnections on this API). */
  manages?: boolean;
}

export const realtime = {
  authorizer: { handler: 'realtime/authorizer', table: 'read' as TableAccess },
  routes: [
    { route: '$connect', handler: 'realtime/connect', table: 'readWrite' },
    { route: '$disconnect', handler: 'realtime/disconnect', table: 'readWrite' },
    { route: '$default', handler: 'realtime/default', table: 'readWrite', manages: true },
  ] as readonly RealtimeRoute[],
};
