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

class ServiceLogger extends Logger {
  /** A logger for one invocation; only the first invocation of the process reports a cold start. */
  forInvocation(context: Context | undefined): ServiceLogger {
    const child = this.createChild() as ServiceLogger;
    child.coldStart = this.getColdStart();
    if (context?.awsRequestId) child.addContext(context);
    return child;
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
const invocation = new AsyncLocalStorage<ServiceLogger>();
const current = (): ServiceLogger => invocation.getStore() ?? rootLogger();

export const logger = {
  /** Adds keys to every later line of the current invocation (request id, method, path, account). */
  withContext(fields: Fields) {
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
export function withInvocationLogger<T>(context: Context | undefined, run: () => Promise<T>): Promise<T> {
  return invocation.run(rootLogger().forInvocation(context), run);
}

export const describeError = (error: unknown) =>
  error instanceof Error ? { error_name: error.name, error_message: error.message, stack: error.stack } : { error };
