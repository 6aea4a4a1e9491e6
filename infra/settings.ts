import { Annotations, Stack } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { readValidatorConfig, VALIDATOR_ENV_VARS } from '../shared/email/validator/config.ts';
import { CORS_ENV, corsOrigins } from '../shared/http/cors.ts';
import { DEFAULT_ACCOUNT_LIMITS } from '../shared/rate-limits.ts';
import { DEFAULT_EVENT_RETENTION_DAYS, MAX_EVENT_RETENTION_DAYS } from '#shared/data/event-retention';

/**
 * What a deployer may choose at `cdk deploy` time, always as CDK context
 * values (`-c name=value`, or the `context` of cdk.json / cdk.context.json):
 * explicit and recorded, never picked up from whatever the deployer's shell
 * happens to export (a local `npm start` sets ALLOW_PRIVATE_MX=true, for one).
 * Every value is checked here, so a bad one fails the synth, not the service.
 */
export interface DeploySettings {
  /** Validator settings for the functions that validate, by their environment variable names. */
  validator: Record<string, string>;
  /** Stage-wide API Gateway throttle, per API: steady requests per second and burst, every account together. */
  throttle: { rateLimit: number; burstLimit: number };
  /** Each account's default limit across both APIs (the usage plan every account's key starts in). */
  accountThrottle: { rateLimit: number; burstLimit: number };
  /** `aws`, or `localstack`: no Lambda authorizers and no usage plans (docs/deploying.md). */
  target: DeployTarget;
  /** Lambda application log level (Lambda drops lines below it before they are stored). */
  logLevel: LogLevel;
  /** E-mail address subscribed to the alarm topic (a topic is created for it). */
  alarmEmail: string | undefined;
  /** An existing SNS topic the alarms notify instead. */
  alarmTopicArn: string | undefined;
  /** Create API Gateway's account-wide CloudWatch Logs role (access and execution logs need one per region). */
  apiGatewayCloudWatchRole: boolean;
  /** Create the CloudWatch dashboard: $3 a month, more than the rest of an idle deployment's bill, so asked for. */
  dashboard: boolean;
  /** Origins allowed to call both APIs from a browser (CORS); empty: no CORS headers, no preflight methods. */
  corsOrigins: string[];
  /** How long API Gateway keeps the authorizer's answer for a token (0: ask on every request). */
  authCacheSeconds: number;
  /** How long the events feeds keep an event (GET /v1/events, the WebSocket's resume), in days. */
  eventRetentionDays: number;
  /** Uploads (POST /v1/files): the largest file in bytes, and the content types allowed (empty: any). */
  files: { maxBytes: number; contentTypes: string[] };
}

export const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const DEFAULT_THROTTLE = { rateLimit: 100, burstLimit: 200 };

export const DEPLOY_TARGETS = ['aws', 'localstack'] as const;
export type DeployTarget = (typeof DEPLOY_TARGETS)[number];

/** A revoked token keeps working for at most this long (docs/api-conventions.md, Authentication). */
export const DEFAULT_AUTH_CACHE_SECONDS = 60;
/** API Gateway's own ceiling for an authorizer's result cache. */
export const MAX_AUTH_CACHE_SECONDS = 3600;

/** The largest upload by default: 25 MiB. */
export const DEFAULT_MAX_FILE_BYTES = 25 * 1024 * 1024;
/** One presigned PUT uploads at most 5 GiB (S3's limit for a single upload). */
export const MAX_SINGLE_PUT_BYTES = 5 * 1024 ** 3;

/** Context keys, as a deployer types them after `-c`. */
export const SETTING = {
  throttleRate: 'apiThrottleRate',
  throttleBurst: 'apiThrottleBurst',
  accountRate: 'accountRateLimit',
  accountBurst: 'accountBurstLimit',
  target: 'target',
  logLevel: 'logLevel',
  alarmEmail: 'alarmEmail',
  alarmTopicArn: 'alarmTopicArn',
  apiGatewayCloudWatchRole: 'apiGatewayCloudWatchRole',
  dashboard: 'dashboard',
  // Named like the variable `npm start` reads, since it means the same.
  corsOrigins: CORS_ENV,
  // Named as docs/api-conventions.md names it (Authentication).
  authCacheSeconds: 'AUTH_CACHE_SECONDS',
  // Named like the variable the functions (and npm start) read.
  eventRetentionDays: 'EVENT_RETENTION_DAYS',
  // Named like the variables the files functions read.
  maxFileBytes: 'MAX_FILE_BYTES',
  fileContentTypes: 'FILE_CONTENT_TYPES',
} as const;

export class DeploySettingError extends Error {
  override name = 'DeploySettingError';
}

export function deploySettings(scope: Construct, env: NodeJS.ProcessEnv = process.env): DeploySettings {
  const context = (key: string): string | undefined => {
    const value: unknown = scope.node.tryGetContext(key);
    return value === undefined || value === null || String(value).trim() === '' ? undefined : String(value).trim();
  };
  return {
    validator: validatorSettings(scope, context, env),
    throttle: {
      rateLimit: number(context(SETTING.throttleRate), SETTING.throttleRate, DEFAULT_THROTTLE.rateLimit, false),
      burstLimit: number(context(SETTING.throttleBurst), SETTING.throttleBurst, DEFAULT_THROTTLE.burstLimit, true),
    },
    accountThrottle: {
      rateLimit: number(context(SETTING.accountRate), SETTING.accountRate, DEFAULT_ACCOUNT_LIMITS.rateLimit, false),
      burstLimit: number(context(SETTING.accountBurst), SETTING.accountBurst, DEFAULT_ACCOUNT_LIMITS.burstLimit, true),
    },
    target: deployTarget(scope),
    logLevel: logLevel(context(SETTING.logLevel)),
    alarmEmail: email(context(SETTING.alarmEmail)),
    alarmTopicArn: topicArn(context(SETTING.alarmTopicArn)),
    apiGatewayCloudWatchRole: flag(context(SETTING.apiGatewayCloudWatchRole), SETTING.apiGatewayCloudWatchRole, true),
    dashboard: flag(context(SETTING.dashboard), SETTING.dashboard, false),
    corsOrigins: cors(context(SETTING.corsOrigins)),
    authCacheSeconds: authCacheSeconds(context(SETTING.authCacheSeconds)),
    eventRetentionDays: eventRetentionDays(context(SETTING.eventRetentionDays)),
    files: {
      maxBytes: maxFileBytes(context(SETTING.maxFileBytes)),
      contentTypes: fileContentTypes(context(SETTING.fileContentTypes)),
    },
  };
}

function maxFileBytes(raw: string | undefined): number {
  const bytes = number(raw, SETTING.maxFileBytes, DEFAULT_MAX_FILE_BYTES, true);
  if (bytes > MAX_SINGLE_PUT_BYTES) {
    throw new DeploySettingError(`${SETTING.maxFileBytes} must be at most ${MAX_SINGLE_PUT_BYTES} (5 GiB, one S3 PUT), got '${raw}'`);
  }
  return bytes;
}

const CONTENT_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;

/** A comma-separated list of `type/subtype`, lower-cased; empty allows any type. */
function fileContentTypes(raw: string | undefined): string[] {
  const types = (raw ?? '')
    .split(',')
    .map((t) => t.trim().toLowerCase())
    .filter(Boolean);
  const bad = types.find((t) => !CONTENT_TYPE.test(t));
  if (bad !== undefined) {
    throw new DeploySettingError(`${SETTING.fileContentTypes} must be a comma-separated list of type/subtype, got '${bad}'`);
  }
  return [...new Set(types)];
}

function eventRetentionDays(raw: string | undefined): number {
  const days = number(raw, SETTING.eventRetentionDays, DEFAULT_EVENT_RETENTION_DAYS, true);
  if (days > MAX_EVENT_RETENTION_DAYS) {
    throw new DeploySettingError(`${SETTING.eventRetentionDays} must be at most ${MAX_EVENT_RETENTION_DAYS} days, got '${raw}'`);
  }
  return days;
}

/**
 * The validator's settings, from context values named like the environment
 * variables the functions read (`-c SMTP_PROBE=tcp -c DNS_SERVERS=10.0.0.2`).
 * ALLOW_PRIVATE_MX is refused: a deployed validator must never count (or
 * probe) private addresses. The same names left in the deployer's shell are
 * not forwarded; synth warns about them so nobody believes they were.
 */
function validatorSettings(scope: Construct, context: (key: string) => string | undefined, env: NodeJS.ProcessEnv) {
  const chosen: Record<string, string> = {};
  for (const name of VALIDATOR_ENV_VARS) {
    const value = context(name);
    if (value !== undefined) chosen[name] = value;
  }
  if (chosen.ALLOW_PRIVATE_MX !== undefined) {
    throw new DeploySettingError(
      'ALLOW_PRIVATE_MX is for local runs and tests only: a deployed validator never treats private, loopback or metadata addresses as mail hosts. Remove the context value.',
    );
  }
  readValidatorConfig(chosen); // throws ValidatorConfigError naming the bad setting
  const ignored = VALIDATOR_ENV_VARS.filter((name) => env[name] !== undefined && env[name] !== '' && chosen[name] === undefined);
  if (ignored.length > 0) {
    Annotations.of(Stack.of(scope)).addWarningV2(
      'serverless-messaging:validator-env-ignored',
      `Not forwarded from your shell: ${ignored.join(', ')}. Validator settings are context values: -c NAME=value.`,
    );
  }
  return chosen;
}

/** Where the stack is deployed: `-c target=localstack` for LocalStack, AWS otherwise. */
export function deployTarget(scope: Construct): DeployTarget {
  const raw: unknown = scope.node.tryGetContext(SETTING.target);
  if (raw === undefined || raw === null || String(raw).trim() === '') return 'aws';
  const value = String(raw).trim();
  if (!(DEPLOY_TARGETS as readonly string[]).includes(value)) {
    throw new DeploySettingError(`${SETTING.target} must be one of ${DEPLOY_TARGETS.join(', ')}, got '${value}'`);
  }
  return value as DeployTarget;
}

function cors(raw: string | undefined): string[] {
  try {
    return corsOrigins(raw ?? '');
  } catch (error) {
    throw new DeploySettingError((error as Error).message);
  }
}

function number(raw: string | undefined, name: string, fallback: number, integer: boolean): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new DeploySettingError(`${name} must be a positive ${integer ? 'integer' : 'number'}, got '${raw}'`);
  }
  return value;
}

function authCacheSeconds(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_AUTH_CACHE_SECONDS;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value > MAX_AUTH_CACHE_SECONDS) {
    throw new DeploySettingError(
      `${SETTING.authCacheSeconds} must be a whole number of seconds from 0 (no caching) to ${MAX_AUTH_CACHE_SECONDS}, got '${raw}'`,
    );
  }
  return value;
}

function flag(raw: string | undefined, name: string, fallback: boolean): boolean {
  if (raw === undefined) return fallback;
  if (raw === 'true' || raw === 'false') return raw === 'true';
  throw new DeploySettingError(`${name} must be 'true' or 'false', got '${raw}'`);
}

function logLevel(raw: string | undefined): LogLevel {
  if (raw === undefined) return 'INFO';
  const level = raw.toUpperCase();
  if (!(LOG_LEVELS as readonly string[]).includes(level)) {
    throw new DeploySettingError(`${SETTING.logLevel} must be one of ${LOG_LEVELS.join(', ')}, got '${raw}'`);
  }
  return level as LogLevel;
}

function email(raw: string | undefined): string | undefined {
  if (raw !== undefined && !/^[^\s@]+@(?:[^\s.@]+\.)+[^\s.@]+$/.test(raw)) {
    throw new DeploySettingError(`${SETTING.alarmEmail} must be an e-mail address, got '${raw}'`);
  }
  return raw;
}

function topicArn(raw: string | undefined): string | undefined {
  if (raw !== undefined && !/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]+$/.test(raw)) {
    throw new DeploySettingError(`${SETTING.alarmTopicArn} must be an SNS topic ARN, got '${raw}'`);
  }
  return raw;
}
