import { ApiGatewayManagementApiClient, DeleteConnectionCommand, PostToConnectionCommand } from '@aws-sdk/client-apigatewaymanagementapi';
import {
  deleteConnection,
  forgetGoneConnection,
  markReplayed,
  revokedTokens,
  userConnections,
  type Connection,
} from '#shared/data/connections';
import { eventsAfter, type FeedEvent } from '#shared/data/events';
import { eventWithFileUrls } from '#shared/files/urls';
import type { Owner } from '#shared/db/keys';
import { describeError, logger } from '#shared/util/logger';
import { sdkLogger } from '#shared/util/sdk-logger';
import { inParallel } from '#shared/util/parallel';

/** Users whose frames are posted at once: one user with many events or connections holds one lane, not the batch. */
const USERS_AT_ONCE = 16;
/** A post that takes longer is given up: a frame late by seconds is worth less than the next user's. */
const POST_TIMEOUT_MS = 3_000;

const clients = new Map<string, ApiGatewayManagementApiClient>();

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
      logger: sdkLogger,
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

/** A connection's replay posts at most this many events; past it the connection is closed, and the client reconnects from the last one it got. */
export const REPLAY_MAX = 1_000;
/** API Gateway answers Gone until a connection's handshake is over: a replay's first post waits this long for it, at most. */
const HANDSHAKE_WAIT_MS = 3_000;

/** One step of a user's lane, in the order of their partition's changes. */
export type LaneStep = { kind: 'event'; seq: number; event: FeedEvent } | { kind: 'replay'; connection: Connection };

export interface Lane {
  owner: Owner;
  steps: LaneStep[];
}

async function postOnceOpen(endpoint: string, owner: Owner, connectionId: string, frame: string): Promise<boolean> {
  for (const started = Date.now(); ;) {
    if (await postFrame(endpoint, owner, connectionId, frame)) return true;
    if (Date.now() - started > HANDSHAKE_WAIT_MS) return false;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Sends a connection opened with `?after=` the user's events after that
 * one, oldest first, and records the last one sent: live frames go to it
 * only past that number. Answers that number, or undefined when the
 * connection was closed or lost on the way.
 */
async function replay(endpoint: string, owner: Owner, connection: Connection): Promise<number | undefined> {
  let through = connection.afterSeq!;
  for (let sent = 0; ;) {
    const page = await eventsAfter(owner, through, 100);
    for (const event of page.events) {
      if (!(await postOnceOpen(endpoint, owner, connection.id, JSON.stringify(await eventWithFileUrls(owner.accountId, event)))))
        return undefined;
    }
    through = page.lastSeq;
    sent += page.events.length;
    if (!page.hasMore) break;
    if (sent >= REPLAY_MAX) {
      await closeConnection(endpoint, connection.id);
      return undefined;
    }
  }
  await markReplayed(owner, connection.id, through);
  return through;
}

/** Whether the live event numbered `seq` goes to the connection: one opened with `?after=` gets only what its replay did not send. */
const wants = (connection: Connection, seq: number) =>
  connection.cursorProblem === undefined &&
  (connection.afterSeq === undefined || (connection.throughSeq !== undefined && seq > connection.throughSeq));

const CURSOR_ERRORS = {
  invalid: {
    code: 'invalid_cursor',
    message: 'No such event in your feed: connect without `after`, or with the id of an event you received',
  },
  expired: {
    code: 'cursor_expired',
    message: 'That event is older than the events kept: read the state you need, then connect without `after`',
  },
} as const;

/** A connection opened with a bad `after=`: one error frame saying why, then closed (the client starts over). */
async function refuseCursor(endpoint: string, owner: Owner, connection: Connection): Promise<void> {
  const { code, message } = CURSOR_ERRORS[connection.cursorProblem!];
  const frame = { type: 'error', error: { type: 'invalid_request_error', code, message, param: 'after' } };
  await postOnceOpen(endpoint, owner, connection.id, JSON.stringify(frame));
  await closeConnection(endpoint, connection.id);
}

/** One user's lane in order: replays of their new connections, and each new event to every open connection that wants it. */
async function runLane(endpoint: string, lane: Lane, open: Connection[]): Promise<number> {
  const byId = new Map(open.map((c) => [c.id, c]));
  let sent = 0;
  for (const step of lane.steps) {
    if (step.kind === 'replay') {
      const connection = byId.get(step.connection.id);
      if (!connection) continue;
      if (connection.cursorProblem) {
        await refuseCursor(endpoint, lane.owner, connection);
        byId.delete(connection.id);
        continue;
      }
      if (connection.afterSeq === undefined) continue;
      const through = await replay(endpoint, lane.owner, connection);
      if (through === undefined) byId.delete(connection.id);
      else connection.throughSeq = through;
      continue;
    }
    const targets = [...byId.values()].filter((c) => wants(c, step.seq));
    if (targets.length === 0) continue;
    const frame = JSON.stringify(await eventWithFileUrls(lane.owner.accountId, step.event));
    const alive = await Promise.all(targets.map((c) => postFrame(endpoint, lane.owner, c.id, frame)));
    sent += alive.filter(Boolean).length;
    targets.forEach((c, i) => alive[i] || byId.delete(c.id));
  }
  return sent;
}

/** A connection opened with a token since revoked is closed (API Gateway then runs `$disconnect`) and forgotten. */
async function closeRevoked(endpoint: string, owner: Owner, connection: Connection): Promise<void> {
  await closeConnection(endpoint, connection.id);
  await deleteConnection(owner, connection.id).catch(() => undefined);
}

/**
 * Runs a batch's lanes, USERS_AT_ONCE users at a time, so a user with many
 * connections or a large group's fan-out shares the function with
 * everyone else's frames. Answers the number of frames sent.
 */
export async function pushLanes(endpoint: string, lanes: Lane[]): Promise<number> {
  // The tokens the connections were opened with, once per batch: a revoked one's connections get nothing more.
  const open = new Map<Lane, Connection[]>();
  await inParallel(lanes, USERS_AT_ONCE, async (lane) => void open.set(lane, await userConnections(lane.owner)));
  const revoked = await revokedTokens([...open.values()].flat().map((c) => c.tokenHash));
  let sent = 0;
  await inParallel(lanes, USERS_AT_ONCE, async (lane) => {
    try {
      const own = open.get(lane)!;
      await Promise.all(own.filter((c) => revoked.has(c.tokenHash)).map((c) => closeRevoked(endpoint, lane.owner, c)));
      sent += await runLane(
        endpoint,
        lane,
        own.filter((c) => !revoked.has(c.tokenHash)),
      );
    } catch (error) {
      logger.warn('realtime events of a user not sent', { contact_id: lane.owner.contactId, ...describeError(error) });
    }
  });
  return sent;
}
