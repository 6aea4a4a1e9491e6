import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { resetConfig } from '#shared/config';
import { extendDb, resetDb } from '#shared/db/client';
import { corsOrigins } from '#shared/http/cors';
import { recoverAfterRestart } from '#shared/email/outbox';
import { recoverJobsAfterRestart } from '#shared/jobs/sweep';
import { deadLetterUrlEnv, queueUrlEnv } from '#shared/queues';
import { schedules, streams, workers } from '#shared/routes';
import { invoke, type Invoker } from './lambda.ts';
import { startDynamoDbLocal, type RunningService } from './dynamodb.ts';
import { startEventSource } from './event-source.ts';
import { startApiServer, type RunningApi } from './http-server.ts';
import { accountRateLimiter } from './rate-limiter.ts';
import { ensureQueues, ensureTable } from './resources.ts';
import { startRealtimeServer, type RunningRealtime } from './realtime-server.ts';
import { startS3Server } from './s3-server.ts';
import { startSqsEmulator } from './sqs.ts';
import { startStreamSource, wakeStreamSources, type StreamSourceOptions } from './stream-source.ts';

export interface LocalStackOptions {
  tableName?: string;
  /** Keep DynamoDB data here across restarts; in memory when absent. */
  dataDir?: string;
  dynamoPort?: number;
  sqsPort?: number;
  /** Port of the local S3 server (files); a free one when absent. */
  s3Port?: number;
  /** Keep the S3 server's objects here; beside `dataDir` (its sibling `s3`) by default, else a temporary directory removed at stop. */
  s3DataDir?: string;
  /** Ports for the HTTP APIs; null serves none (in-process tests). */
  messagingPort?: number | null;
  emailPort?: number | null;
  /** Port of the realtime WebSocket API; null serves none. */
  realtimePort?: number | null;
  /** Run the queue workers like Lambda's event source mappings. */
  workers?: boolean;
  /** Per-account rate limits, as the usage plans on AWS (default on; benches that load one account turn them off). */
  rateLimits?: boolean;
}

export interface LocalStack {
  env: Record<string, string>;
  messagingUrl?: string;
  emailUrl?: string;
  realtimeUrl?: string;
  stop: () => Promise<void>;
}

const REGION = 'us-east-1';
const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };

export interface Backends {
  env: Record<string, string>;
  stop: () => Promise<void>;
}

/** The local bucket of the files API: one per table, as one per stack on AWS. */
export const filesBucketName = (tableName: string) => `${tableName}-files`;

/**
 * DynamoDB Local, the SQS emulator and the S3 server, with the table, queues
 * and bucket created from the shared definitions.
 */
export async function startBackends(options: LocalStackOptions = {}): Promise<Backends> {
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(() => undefined);
  };
  try {
    const tableName = options.tableName ?? 'serverless-messaging';
    const dynamo: RunningService = await startDynamoDbLocal({ port: options.dynamoPort, dataDir: options.dataDir });
    stops.push(dynamo.stop);
    const sqsService = await startSqsEmulator({ port: options.sqsPort });
    stops.push(sqsService.stop);
    const s3DataDir =
      options.s3DataDir ??
      (options.dataDir ? path.join(path.dirname(path.resolve(options.dataDir)), 's3') : undefined) ??
      temporaryDir(stops);
    const s3 = await startS3Server({
      port: options.s3Port ?? 0,
      dataDir: s3DataDir,
      bucket: filesBucketName(tableName),
      credentials,
      corsOrigins: corsOrigins(),
    });
    stops.push(s3.stop);

    const ddb = new DynamoDBClient({ endpoint: dynamo.endpoint, region: REGION, credentials });
    await ensureTable(ddb, tableName);
    ddb.destroy();
    const sqs = new SQSClient({ endpoint: sqsService.endpoint, region: REGION, credentials });
    const queueEnv = await ensureQueues(sqs, tableName);
    sqs.destroy();
    const env: Record<string, string> = {
      TABLE_NAME: tableName,
      AWS_REGION: REGION,
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
      AWS_ENDPOINT_URL_SQS: sqsService.endpoint,
      // Path-style, `<endpoint>/<bucket>/<key>`: the SDK's and the signer's name for S3's endpoint.
      AWS_ENDPOINT_URL_S3: s3.endpoint,
      FILES_BUCKET: filesBucketName(tableName),
      WEBHOOK_SECRET_KEY: localWebhookKey(options.dataDir),
      ...queueEnv,
    };
    return { env, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A directory for this run only, removed at stop (after the server using it, since stops run in reverse). */
function temporaryDir(stops: (() => Promise<void>)[]): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'local-s3-'));
  stops.push(async () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * The local stand-in for the KMS key that seals webhook secrets and replayed credentials
 * (shared/util/sealing.ts): random, kept with the data when there is a
 * data directory, so secrets stored before a restart still open.
 */
function localWebhookKey(dataDir: string | undefined): string {
  const file = dataDir && path.join(dataDir, 'webhook-secret-key');
  if (file && existsSync(file)) return readFileSync(file, 'utf8').trim();
  const key = randomBytes(32).toString('base64');
  if (file) writeFileSync(file, key, { mode: 0o600 });
  return key;
}

/** Points this process's handlers at the backends: they read the environment, as on Lambda. */
export function useBackends(env: Record<string, string>): void {
  Object.assign(process.env, env);
  resetConfig();
  resetDb();
}

/** Runs every worker the way Lambda's SQS event source mapping would. */
export function startWorkers(env: Record<string, string>, options: { waitSeconds?: number; run?: Invoker } = {}) {
  const sqs = new SQSClient({ endpoint: env.AWS_ENDPOINT_URL_SQS, region: REGION, credentials });
  const sources = workers.map((worker) =>
    startEventSource(sqs, worker, env[(worker.deadLetters ? deadLetterUrlEnv : queueUrlEnv)(worker.queue)]!, options),
  );
  return {
    stop: async () => {
      await Promise.all(sources.map((s) => s.stop()));
      sqs.destroy();
    },
  };
}

let wakeHooks = 0;
/** The commands that change items (a failed one throws before waking anyone). */
const WRITE_COMMAND = /^(Put|Update|Delete|BatchWrite|TransactWrite)/;

/** Runs every change-stream consumer the way Lambda's DynamoDB event source mapping would. */
export function startStreams(
  env: Record<string, string>,
  options: Pick<StreamSourceOptions, 'checkpointFile' | 'from' | 'run' | 'idleMs'> = {},
) {
  // Each write this process makes wakes the pollers: its change is read at once, and idle pollers ask rarely.
  const unhook = extendDb(`wake-stream-sources-${++wakeHooks}`, (next, context) => async (args) => {
    const out = await next(args);
    if (WRITE_COMMAND.test(context.commandName ?? '')) wakeStreamSources();
    return out;
  });
  const sources: ReturnType<typeof startStreamSource>[] = [];
  const stop = async () => {
    unhook();
    await Promise.all(sources.map((s) => s.stop()));
  };
  try {
    for (const consumer of streams) {
      sources.push(
        startStreamSource(consumer, {
          endpoint: env.AWS_ENDPOINT_URL_DYNAMODB!,
          region: env.AWS_REGION ?? REGION,
          credentials,
          tableName: env.TABLE_NAME!,
          ...options,
          // One checkpoint file per consumer.
          checkpointFile: options.checkpointFile?.replace(/\.json$/, `-${consumer.name}.json`),
        }),
      );
    }
  } catch (error) {
    // An unreadable checkpoint file: nothing of this call is left polling or hooked.
    void stop();
    throw error;
  }
  return { stop };
}

/** Runs the scheduled functions on timers, as EventBridge rules would. */
export function startSchedules(options: { intervalMs?: (minutes: number) => number } = {}) {
  const timers = schedules.map((schedule) =>
    setInterval(
      () => void invoke(schedule.handler, {}, schedule.timeoutSeconds).catch((error) => console.error(`[${schedule.name}]`, error)),
      options.intervalMs?.(schedule.everyMinutes) ?? schedule.everyMinutes * 60_000,
    ),
  );
  return { stop: async () => timers.forEach(clearInterval) };
}

/**
 * The whole service on this machine: backends, the APIs and the workers,
 * all running the real handlers in this process.
 */
export async function startLocalRuntime(options: LocalStackOptions = {}): Promise<LocalStack> {
  const backends = await startBackends(options);
  const stops: (() => Promise<void>)[] = [backends.stop];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(() => undefined);
  };
  try {
    // Webhooks to loopback receivers are allowed locally (docs/webhooks.md); the admin command line reads this from the runtime file.
    backends.env.ALLOW_PRIVATE_WEBHOOKS = process.env.ALLOW_PRIVATE_WEBHOOKS ?? 'true';
    let realtimeServer: RunningRealtime | undefined;
    if (options.realtimePort !== null) {
      realtimeServer = await startRealtimeServer(options.realtimePort ?? 0);
      stops.push(realtimeServer.close);
      // Where the stream consumer posts frames: the local server's @connections API, as the stage's on AWS.
      backends.env.REALTIME_ENDPOINT = realtimeServer.callbackUrl;
    }
    useBackends(backends.env);
    if (options.workers !== false) {
      stops.push(startWorkers(backends.env).stop);
      stops.push(
        startStreams(backends.env, { checkpointFile: options.dataDir && path.join(options.dataDir, 'stream-checkpoint.json') }).stop,
      );
      stops.push(startSchedules().stop);
      // The local queue starts empty: work it held before a stop or a crash is queued again from the table.
      await recoverAfterRestart();
      await recoverJobsAfterRestart();
    }
    // One limiter for both servers: an account's limit counts its requests to either API, as one usage plan does on AWS.
    const limiter = options.rateLimits === false ? undefined : accountRateLimiter();
    // Both APIs answer the requests they are running, at once, before anything those need stops.
    const servers: RunningApi[] = [];
    stops.push(async () => void (await Promise.all(servers.map((server) => server.close()))));
    let messaging: RunningApi | undefined;
    if (options.messagingPort !== null) {
      messaging = await startApiServer('messaging', options.messagingPort ?? 0, undefined, undefined, limiter);
      servers.push(messaging);
    }
    let email: RunningApi | undefined;
    if (options.emailPort !== null) {
      email = await startApiServer('email', options.emailPort ?? 0, undefined, undefined, limiter);
      servers.push(email);
    }
    return { env: backends.env, messagingUrl: messaging?.url, emailUrl: email?.url, realtimeUrl: realtimeServer?.url, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
