/**
 * Structured JSON logs, one line per event, always carrying the request id so
 * a line in CloudWatch can be joined to the X-Request-Id a client reports.
 */
type Level = 'debug' | 'info' | 'warn' | 'error';

let context: Record<string, unknown> = {};
const quiet = () => process.env.LOG_LEVEL === 'silent';

export const logger = {
  withContext(fields: Record<string, unknown>) {
    context = { ...fields };
  },
  log(level: Level, message: string, fields: Record<string, unknown> = {}) {
    if (quiet()) return;
    const line = JSON.stringify({ level, message, time: new Date().toISOString(), ...context, ...fields });
    (level === 'error' || level === 'warn' ? process.stderr : process.stdout).write(`${line}\n`);
  },
  info: (message: string, fields?: Record<string, unknown>) => logger.log('info', message, fields),
  warn: (message: string, fields?: Record<string, unknown>) => logger.log('warn', message, fields),
  error: (message: string, fields?: Record<string, unknown>) => logger.log('error', message, fields),
};

export const describeError = (error: unknown) =>
  error instanceof Error ? { error_name: error.name, error_message: error.message, stack: error.stack } : { error };
