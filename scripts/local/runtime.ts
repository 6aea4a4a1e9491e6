import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { resetConfig } from '#shared/config';
import { resetDb } from '#shared/db/client';
import { recoverAfterRestart } from '#shared/email/recovery';
import { deadLetterUrlEnv, queueUrlEnv } from '#shared/queues';
import { schedules, workers } from '#shared/routes';
import { invoke, type Invoker } from './lambda.ts';
import { startDynamoDbLocal, type RunningService } from './dynamodb.ts';
import { startEventSource } from './event-source.ts';
import { startApiServer, type RunningApi } from './http-server.ts';
import { accountRateLimiter } from './rate-limiter.ts';
import { ensureQueues, ensureTable } from './resources.ts';
import { startSqsEmulator } from './sqs.ts';

export interface LocalStackOptions {
  tableName?: string;
  /** Keep DynamoDB data here across restarts; in memory when absent. */
  dataDir?: string;
  dynamoPort?: number;
  sqsPort?: number;
  /** Ports for the HTTP APIs; null serves none (in-process tests). */
  messagingPort?: number | null;
  emailPort?: number | null;
  /** Run the queue workers like Lambda's event source mappings. */
  workers?: boolean;
  /** Per-account rate limits, as the usage plans on AWS (default on; benches that load one account turn them off). */
  rateLimits?: boolean;
}

export interface LocalStack {
  env: Record<string, string>;
  messagingUrl?: string;
  emailUrl?: string;
  stop: () => Promise<void>;
}

const REGION = 'us-east-1';
const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };

export interface Backends {
  env: Record<string, string>;
  stop: () => Promise<void>;
}

/** DynamoDB Local and the SQS emulator, with the table and queues created from the shared definitions. */
export async function startBackends(options: LocalStackOptions = {}): Promise<Backends> {
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(() => undefined);
  };
  try {
    const dynamo: RunningService = await startDynamoDbLocal({ port: options.dynamoPort, dataDir: options.dataDir });
    stops.push(dynamo.stop);
    const sqsService = await startSqsEmulator({ port: options.sqsPort });
    stops.push(sqsService.stop);

    const tableName = options.tableName ?? 'serverless-messaging';
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
      ...queueEnv,
    };
    return { env, stop };
  } catch (error) {
    await stop();
    throw error;
  }
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
    useBackends(backends.env);
    if (options.workers !== false) {
      stops.push(startWorkers(backends.env).stop);
      stops.push(startSchedules().stop);
      // The local queue starts empty: work it held before a stop or a crash is queued again from the table.
      await recoverAfterRestart();
    }
    // One limiter for both servers: an account's limit counts its requests to either API, as one usage plan does on AWS.
    const limiter = options.rateLimits === false ? undefined : accountRateLimiter();
    let messaging: RunningApi | undefined;
    if (options.messagingPort !== null) {
      messaging = await startApiServer('messaging', options.messagingPort ?? 0, undefined, undefined, limiter);
      stops.push(messaging.close);
    }
    let email: RunningApi | undefined;
    if (options.emailPort !== null) {
      email = await startApiServer('email', options.emailPort ?? 0, undefined, undefined, limiter);
      stops.push(email.close);
    }
    return { env: backends.env, messagingUrl: messaging?.url, emailUrl: email?.url, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
