import { batchGet } from '#shared/db/batch';
import { condition, update } from '#shared/db/expression';
import { deleteItem, putItem, query, unlessConditionFails, updateItem, type Item } from '#shared/db/items';
import { keys, ownerValues, type Owner } from '#shared/db/keys';
import { nowSeconds } from '#shared/util/ids';
import { isLive } from '#shared/data/tokens';

/**
 * API Gateway closes a WebSocket after 2 hours whatever happens; an item
 * outlives it by a margin so the TTL, not a missed `$disconnect`, is what
 * removes a connection nobody said goodbye to.
 */
export const CONNECTION_TTL_SECONDS = 2 * 3600 + 600;
/** Connections one user's events go to (devices, tabs): a bound on one user's share of a fan-out. */
export const MAX_CONNECTIONS_PER_USER = 100;
/**
 * A post to a connection whose handshake API Gateway has not finished yet
 * answers Gone too: a connection younger than this is not forgotten for it.
 */
const HANDSHAKE_GRACE_SECONDS = 10;

export interface Connection {
  id: string;
  /** The hash of the token it was opened with: a revoked token's connections are closed. */
  tokenHash: string;
  /** Opened with `?after=`: the number, in the user's feed, of the last event the client has. */
  afterSeq?: number;
  /** Once the events after `afterSeq` were replayed: the number of the last one sent; live frames start after it. */
  throughSeq?: number;
  /** Opened with an `after=` that is no event of the user's feed, or one past the retention: told so, then closed. */
  cursorProblem?: CursorProblem;
}

export type CursorProblem = 'invalid' | 'expired';

/** Where a connection resumes: after an event of the user's feed, or nowhere (a cursor it was told is bad). */
export type Resume = { afterSeq?: number; cursorProblem?: CursorProblem };

const connectionKey = (owner: Owner, connectionId: string) => keys.connection.key({ ...ownerValues(owner), connection: connectionId });

export async function putConnection(
  owner: Owner,
  connectionId: string,
  tokenHash: string,
  resume: Resume = {},
  now = nowSeconds(),
): Promise<void> {
  await putItem({
    ...connectionKey(owner, connectionId),
    type: 'connection',
    connection_id: connectionId,
    token_hash: tokenHash,
    ...(resume.afterSeq === undefined ? {} : { after_seq: resume.afterSeq }),
    ...(resume.cursorProblem === undefined ? {} : { cursor_problem: resume.cursorProblem }),
    connected_at: now,
    expires_at: now + CONNECTION_TTL_SECONDS,
  });
}

/** The replay of a connection opened with `?after=` sent the events through `throughSeq`. */
export async function markReplayed(owner: Owner, connectionId: string, throughSeq: number): Promise<void> {
  await unlessConditionFails(
    updateItem(connectionKey(owner, connectionId), update().set`through_seq = ${throughSeq}`.when`attribute_exists(pk)`),
  );
}

/** A ping: the connection is alive, its record stays (only a record still there is kept). */
export async function touchConnection(owner: Owner, connectionId: string, now = nowSeconds()): Promise<void> {
  await unlessConditionFails(
    updateItem(connectionKey(owner, connectionId), update().set`expires_at = ${now + CONNECTION_TTL_SECONDS}`.when`attribute_exists(pk)`),
  );
}

export const deleteConnection = (owner: Owner, connectionId: string) => deleteItem(connectionKey(owner, connectionId));

/** Forgets a connection API Gateway reported gone, unless it is still in its handshake. */
export const forgetGoneConnection = (owner: Owner, connectionId: string, now = nowSeconds()) =>
  unlessConditionFails(deleteItem(connectionKey(owner, connectionId), condition`connected_at < ${now - HANDSHAKE_GRACE_SECONDS}`));

/**
 * The user's open connections: one Query of their partition. Items past
 * their TTL that DynamoDB has not removed yet are left out.
 */
export async function userConnections(owner: Owner): Promise<Connection[]> {
  const now = nowSeconds();
  const items = await query(
    { partition: keys.connection.partition(ownerValues(owner)), sort: ['begins_with', keys.connection.skPrefix] },
    MAX_CONNECTIONS_PER_USER,
    1,
  );
  return items.filter((item) => Number(item.expires_at) > now).map(toConnection);
}

/** A connection item (a read, or the stream's image of its insert). */
export function toConnection(item: Item): Connection {
  return {
    id: String(item.connection_id),
    tokenHash: String(item.token_hash ?? ''),
    ...(typeof item.after_seq === 'number' ? { afterSeq: item.after_seq } : {}),
    ...(typeof item.through_seq === 'number' ? { throughSeq: item.through_seq } : {}),
    ...(item.cursor_problem === 'invalid' || item.cursor_problem === 'expired' ? { cursorProblem: item.cursor_problem } : {}),
  };
}

/** Of these token hashes, those whose token is revoked, expired or gone (one BatchGet per 100). */
export async function revokedTokens(tokenHashes: string[]): Promise<Set<string>> {
  const unique = [...new Set(tokenHashes)];
  if (unique.length === 0) return new Set();
  const found = await batchGet(
    unique.map((token_hash) => keys.token.key({ token_hash })),
    true,
  );
  const live = new Set(found.filter((item) => isLive(item)).map((item) => String(item.pk)));
  return new Set(unique.filter((hash) => !live.has(keys.token.key({ token_hash: hash }).pk)));
}
