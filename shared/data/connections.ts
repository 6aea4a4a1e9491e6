import { deleteItem, putItem, query } from '#shared/db/items';
import { keys, ownerValues, type Owner } from '#shared/db/keys';
import { nowSeconds } from '#shared/util/ids';

/**
 * API Gateway closes a WebSocket after 2 hours whatever happens; an item
 * outlives it by a margin so the TTL, not a missed `$disconnect`, is what
 * removes a connection nobody said goodbye to.
 */
export const CONNECTION_TTL_SECONDS = 2 * 3600 + 600;
/** Connections one user's events go to (devices, tabs): a bound on one user's share of a fan-out. */
export const MAX_CONNECTIONS_PER_USER = 100;

const connectionKey = (owner: Owner, connectionId: string) => keys.connection.key({ ...ownerValues(owner), connection: connectionId });

export async function putConnection(owner: Owner, connectionId: string, now = nowSeconds()): Promise<void> {
  await putItem({
    ...connectionKey(owner, connectionId),
    type: 'connection',
    connection_id: connectionId,
    connected_at: now,
    expires_at: now + CONNECTION_TTL_SECONDS,
  });
}

export const deleteConnection = (owner: Owner, connectionId: string) => deleteItem(connectionKey(owner, connectionId));

/**
 * The user's open connections: one Query of their partition. Items past
 * their TTL that DynamoDB has not removed yet are left out.
 */
export async function userConnections(owner: Owner): Promise<string[]> {
  const now = nowSeconds();
  const items = await query({ partition: keys.connection.partition(ownerValues(owner)) }, MAX_CONNECTIONS_PER_USER, 1);
  return items.filter((item) => Number(item.expires_at) > now).map((item) => String(item.connection_id));
}
