/**
 * Structured JSON logs (Powertools for AWS Lambda Logger), one line per
 * event, always carrying the request id so a line in CloudWatch can be joined
 * to the X-Request-Id a client reports.
 *
 * Each invocation logs through its own child logger, held in an
 * AsyncLocalStorage: Powertools keeps keys per logger instance, and the local
 * server (or a Lambda running several invocations at once) interleaves
 * requests in one process, where one shared logger would stamp one request's
 * id on another's lines.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Logger } from '@aws-lambda-powertools/logger';
import type { ConstructorOptions, LogLevel } from '@aws-lambda-powertools/logger/types';
import type { Context } from 'aws-lambda';
import { redact } from '#shared/util/redact';

type Level = 'debug' | 'info' | 'warn' | 'error';
type Fields = Record<string, unknown>;

/**
 * Child loggers of finished invocations, kept for the next: making one
 * builds a Powertools Logger (its console, its environment reads), which
 * cost a page request about a tenth of its CPU time in the local server.
 * Only one with a Lambda context is kept, as the next invocation's context
 * replaces it whole; one invocation at a time (Lambda) keeps just one.
 */
const idle: ServiceLogger[] = [];
const MAX_IDLE = 16;

class ServiceLogger extends Logger {
  /** A logger for one invocation; only the first invocation of the process reports a cold start. */
  forInvocation(context: Context | undefined): ServiceLogger {
    const reused = context?.awsRequestId ? idle.pop() : undefined;
    const child = reused ?? (this.createChild() as ServiceLogger);
    if (reused) {
      reused.resetKeys();
      if (reused.getLevelName() !== this.getLevelName()) reused.setLogLevel(this.getLevelName());
    }
    child.coldStart = this.getColdStart();
    if (context?.awsRequestId) child.addContext(context);
    return child;
  }

  /** Back to the pool once its invocation is over (see `idle`). */
  release(context: Context | undefined) {
    if (context?.awsRequestId && idle.length < MAX_IDLE) idle.push(this);
  }

  protected override createLogger(options?: ConstructorOptions): ServiceLogger {
    return new ServiceLogger(options);
  }
}

/** LOG_LEVEL in any case (`silent`, `info`, ...); Lambda's own log-level control (AWS_LAMBDA_LOG_LEVEL) wins when set. */
const levelFromEnv = (): LogLevel | undefined => (process.env.LOG_LEVEL?.trim().toUpperCase() || undefined) as LogLevel | undefined;

// Made at the first line rather than at import, so a script that sets LOG_LEVEL after its imports is obeyed.
let root: ServiceLogger | undefined;
const rootLogger = () =>
  (root ??= new ServiceLogger({
    serviceName: process.env.POWERTOOLS_SERVICE_NAME || 'serverless-messaging',
    logLevel: levelFromEnv(),
    jsonReplacerFn: redact,
  }));
/**
 * One invocation's logging: its pooled logger while it runs. Work it
 * started that logs after its end (a race's losing branch) must not write
 * through a logger another invocation now holds: it gets one of its own,
 * with the same context and keys.
 */
interface InvocationLog {
  logger: ServiceLogger;
  context: Context | undefined;
  keys: Fields;
  ended: boolean;
  late?: ServiceLogger;
}

const invocation = new AsyncLocalStorage<InvocationLog>();

function current(): ServiceLogger {
  const log = invocation.getStore();
  if (!log) return rootLogger();
  if (!log.ended) return log.logger;
  if (!log.late) {
    // Never released: it stays with the work that outlived its invocation.
    log.late = rootLogger().forInvocation(log.context);
    log.late.appendKeys(log.keys);
  }
  return log.late;
}

export const logger = {
  /** Adds keys to every later line of the current invocation (request id, method, path, account). */
  withContext(fields: Fields) {
    const log = invocation.getStore();
    if (log) Object.assign(log.keys, fields);
    current().appendKeys(fields);
  },
  log(level: Level, message: string, fields: Fields = {}) {
    current()[level](message, fields);
  },
  debug: (message: string, fields?: Fields) => logger.log('debug', message, fields),
  info: (message: string, fields?: Fields) => logger.log('info', message, fields),
  warn: (message: string, fields?: Fields) => logger.log('warn', message, fields),
  error: (message: string, fields?: Fields) => logger.log('error', message, fields),
  /** Changes the level of later invocations (tests turn logs on to read them). */
  setLevel(level: string) {
    rootLogger().setLogLevel(level.toUpperCase() as LogLevel);
  },
};

/** Runs one invocation with its own logger: its lines carry its Lambda context and the keys added during it. */
export async function withInvocationLogger<T>(context: Context | undefined, run: () => Promise<T>): Promise<T> {
  const log: InvocationLog = { logger: rootLogger().forInvocation(context), context, keys: {}, ended: false };
  try {
    return await invocation.run(log, run);
  } finally {
    log.ended = true;
    log.logger.release(context);
  }
}

export const describeError = (error: unknown) =>
  error instanceof Error ? { error_name: error.name, error_message: error.message, stack: error.stack } : { error };
