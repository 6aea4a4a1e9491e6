/**
 * Runtime configuration, read from the environment once per cold start.
 * A missing required setting fails the first call that needs it loudly
 * instead of surfacing later as an obscure AWS SDK error.
 */
export class ConfigError extends Error {}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new ConfigError(`missing required environment variable ${name}`);
  return value;
}

let cached: Config | undefined;

export interface Config {
  tableName: string;
  /** Queue of email validation work (the worker consumes it). */
  validationQueueUrl: string | undefined;
  region: string;
}

export function config(): Config {
  cached ??= {
    tableName: required('TABLE_NAME'),
    validationQueueUrl: process.env.VALIDATION_QUEUE_URL || undefined,
    region: process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1',
  };
  return cached;
}

/** Tests point the same process at a fresh table; production never calls this. */
export function resetConfig(): void {
  cached = undefined;
}
