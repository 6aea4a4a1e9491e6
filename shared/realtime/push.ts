import { ApiGatewayManagementApiClient, DeleteConnectionCommand, PostToConnectionCommand } from '@aws-sdk/client-apigatewaymanagementapi';
import { deleteConnection, forgetGoneConnection, revokedTokens, userConnections, type Connection } from '#shared/data/connections';
import type { Owner } from '#shared/db/keys';
import { describeError, logger } from '#shared/util/logger';
import { inParallel } from '#shared/util/parallel';
import type { UserEvent } from '#shared/stream/users';

/** Users whose frames are posted at once: one user with many events or connections holds one lane, not the batch. */
const USERS_AT_ONCE = 16;
/** A post that takes longer is given up: a frame late by seconds is worth less than the next user's. */
const POST_TIMEOUT_MS = 3_000;

const clients = new Map<string, ApiGatewayManagementApiClient>();

/** One user's key in the batch's maps. */
const ownerKey = (owner: Owner) => `${owner.accountId}|${owner.contactId}`;

/**
 * The `@connections` management API of the realtime API: on AWS its stage's
 * callback URL (`https://<api>.execute-api.<region>.amazonaws.com/<stage>`),
 * under `npm start` the local realtime server, which answers the same calls.
 */
function connectionsApi(endpoint: string): ApiGatewayManagementApiClient {
  let client = clients.get(endpoint);
  if (!client) {
    client = new ApiGatewayManagementApiClient({
      endpoint,
      // A post that timed out may have been delivered: it is not sent again (a frame twice is worse than once late).
      maxAttempts: 1,
      requestHandler: { requestTimeout: POST_TIMEOUT_MS, connectionTimeout: 1_000 },
    });
    clients.set(endpoint, client);
  }
  return client;
}

/** Where the stream consumer posts frames: set by the stack (and by npm start); absent where there is no WebSocket API. */
export const realtimeEndpoint = () => process.env.REALTIME_ENDPOINT || undefined;

const isGone = (error: unknown) =>
  (error as { name?: string }).name === 'GoneException' ||
  (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 410;

/** Sends one frame; a connection API Gateway reports gone is forgotten (false). */
export async function postFrame(endpoint: string, owner: Owner, connectionId: string, frame: string): Promise<boolean> {
  try {
    await connectionsApi(endpoint).send(new PostToConnectionCommand({ ConnectionId: connectionId, Data: new TextEncoder().encode(frame) }));
    return true;
  } catch (error) {
    if (isGone(error)) {
      await forgetGoneConnection(owner, connectionId).catch(() => undefined);
      return false;
    }
    logger.warn('realtime frame not sent', { connection_id: connectionId, ...describeError(error) });
    return true;
  }
}

/** Closes a connection from the server's side (API Gateway then runs `$disconnect`). */
export async function closeConnection(endpoint: string, connectionId: string): Promise<void> {
  await connectionsApi(endpoint)
    .send(new DeleteConnectionCommand({ ConnectionId: connectionId }))
    .catch(() => undefined);
}

/**
 * Each user's open connections, read once per batch (one Query per user),
 * shared by the check that skips the changes of users nobody listens for
 * and by the posts.
 */
export class BatchConnections {
  private readonly read = new Map<string, Promise<Connection[]>>();

  of(owner: Owner): Promise<Connection[]> {
    const key = ownerKey(owner);
    let found = this.read.get(key);
    if (!found) this.read.set(key, (found = userConnections(owner)));
    return found;
  }

  async anyOf(owners: Owner[]): Promise<boolean> {
    return (await Promise.all(owners.map((o) => this.of(o)))).some((c) => c.length > 0);
  }
}

/** One user's events in order, each to every open connection of theirs at once. */
async function pushToUser(endpoint: string, owner: Owner, events: UserEvent[], open: Connection[]): Promise<number> {
  let sent = 0;
  for (const { event } of events) {
    if (open.length === 0) break;
    const frame = JSON.stringify(event);
    const alive = await Promise.all(open.map((c) => postFrame(endpoint, owner, c.id, frame)));
    sent += alive.filter(Boolean).length;
    open = open.filter((_, i) => alive[i]);
  }
  return sent;
}

/** A connection opened with a token since revoked is closed (API Gateway then runs `$disconnect`) and forgotten. */
async function closeRevoked(endpoint: string, owner: Owner, connection: Connection): Promise<void> {
  await closeConnection(endpoint, connection.id);
  await deleteConnection(owner, connection.id).catch(() => undefined);
}

/** One user's events of a batch, in their order. */
interface Lane {
  owner: Owner;
  events: UserEvent[];
}

/**
 * Posts a batch's events: grouped by user (each user's in their order),
 * USERS_AT_ONCE users at a time, so a user with many connections or a
 * large group's fan-out shares the function with everyone else's frames.
 * Answers the number of frames sent.
 */
export async function pushEvents(endpoint: string, events: UserEvent[], connections = new BatchConnections()): Promise<number> {
  const lanes = [...Map.groupBy(events, (e) => ownerKey(e.owner)).values()].map((own): Lane => ({ owner: own[0]!.owner, events: own }));
  // The tokens the connections were opened with, once per batch: a revoked one's connections get nothing more.
  // (A group edit names up to 1,000 users: their connections are read USERS_AT_ONCE at a time.)
  const open = new Map<Lane, Connection[]>();
  await inParallel(lanes, USERS_AT_ONCE, async (lane) => void open.set(lane, await connections.of(lane.owner)));
  const revoked = await revokedTokens([...open.values()].flat().map((c) => c.tokenHash));
  let sent = 0;
  await inParallel(lanes, USERS_AT_ONCE, async (lane) => {
    try {
      const own = open.get(lane)!;
      await Promise.all(own.filter((c) => revoked.has(c.tokenHash)).map((c) => closeRevoked(endpoint, lane.owner, c)));
      sent += await pushToUser(
        endpoint,
        lane.owner,
        lane.events,
        own.filter((c) => !revoked.has(c.tokenHash)),
      );
    } catch (error) {
      logger.warn('realtime events of a user not sent', { contact_id: lane.owner.contactId, ...describeError(error) });
    }
  });
  return sent;
}
