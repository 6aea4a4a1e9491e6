import path from 'node:path';
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import {
  ApplicationLogLevel,
  Architecture,
  Function as Lambda,
  LoggingFormat,
  RecursiveLoop,
  SystemLogLevel,
  Tracing,
} from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { queueUrlEnv } from '../shared/queues.ts';
import { DEFAULT_TIMEOUT_SECONDS, MEMORY_MB, type FileAccess, type QueueName, type TableAccess } from '../shared/routes.ts';
import { bundledCode } from './bundle.ts';
import { fileAccess, type FunctionRoles } from './roles.ts';
import { lambdaRuntime } from './runtime.ts';
import type { DeploySettings } from './settings.ts';

/** Function logs and API access logs alike. */
export const LOG_RETENTION = RetentionDays.ONE_MONTH;

/** What a function needs, as declared by a row of the route table. */
export interface FunctionSpec {
  handler: string;
  table?: TableAccess;
  sends?: readonly QueueName[];
  timeoutSeconds?: number;
  environment?: Record<string, string>;
  validates?: boolean;
  /** Opens webhook secrets: kms:Decrypt on the webhook key. */
  decrypts?: boolean;
  /** Seals secrets (kms:Encrypt on the webhook key) and opens its idempotent replays' (kms:Decrypt of the replay context). */
  seals?: boolean;
  /** What the function is for (an API route: its method, path and credential). */
  description?: string;
  /** Posts to the realtime API's connections (granted by infra/realtime.ts once the stage exists). */
  manages?: boolean;
  /** Uses the files bucket's objects (FileAccess in shared/routes/route.ts). */
  files?: readonly FileAccess[];
}

/**
 * The table actions of a row's access, named one by one rather than CDK's
 * grantReadData: no function scans (only the admin command line's
 * migrations do, with the operator's credentials), and a Scan would read
 * every tenant's items. A transaction's parts need the action of each.
 */
export const TABLE_ACTIONS = {
  read: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:ConditionCheckItem'],
  write: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'],
} as const;

/**
 * The S3 actions of each file access, on the bucket's objects only: a
 * presigned URL can do only what its signer's role may, so a function that
 * makes upload URLs needs PutObject, one that makes download URLs GetObject.
 * No ListBucket: the functions know their keys, and without it a missing
 * object answers 403 rather than 404, which they treat alike.
 */
export const FILE_ACTIONS: Record<FileAccess, readonly string[]> = {
  read: ['s3:GetObject'],
  write: ['s3:PutObject', 's3:PutObjectTagging'],
  delete: ['s3:DeleteObject'],
};

export interface FunctionDeps {
  functionsDir: string;
  table: ITable;
  /** Seals the webhook endpoints' secrets and the credentials in idempotent creates' answers (shared/util/sealing.ts). */
  webhookKey: IKey;
  queues: Record<QueueName, IQueue>;
  /** The files' private bucket (POST /v1/files uploads, message attachments). */
  filesBucket: IBucket;
  settings: DeploySettings;
  roles: FunctionRoles;
}

/** kms:Decrypt of what was sealed under this encryption context key alone (shared/util/sealing.ts). */
const decryptUnder = (key: IKey, context: 'webhook' | 'replay') =>
  new PolicyStatement({
    actions: ['kms:Decrypt'],
    resources: [key.keyArn],
    conditions: {
      'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': [context] },
      Null: { 'kms:EncryptionContextKeys': 'false' },
    },
  });

/** `conversations/list` -> `ConversationsList`, for construct ids. */
export const pascalCase = (s: string) =>
  s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');

/**
 * `ownRole`: the caller adds grants of this function alone after it is made
 * (an event source, a failure destination), so it must not share a role.
 */
export function createFunction(
  scope: Construct,
  id: string,
  spec: FunctionSpec,
  deps: FunctionDeps,
  { ownRole = false, requeues = false } = {},
): Lambda {
  // An explicit log group (rather than logRetention) avoids the extra
  // custom-resource Lambda that logRetention adds to the stack.
  const logGroup = new LogGroup(scope, `${id}Logs`, {
    retention: LOG_RETENTION,
    removalPolicy: RemovalPolicy.DESTROY,
  });
  // The role of its grant profile, allowed to write to its members' log groups only
  // (the default role's managed policy may create and write any log group in the account).
  const role = deps.roles.roleFor(spec, ownRole ? id : undefined);
  logGroup.grantWrite(role);

  const fn = new Lambda(scope, id, {
    code: bundledCode(path.join(deps.functionsDir, `${spec.handler}.ts`)),
    handler: 'index.handler',
    description: spec.description,
    runtime: lambdaRuntime(),
    architecture: Architecture.ARM_64,
    memorySize: MEMORY_MB,
    timeout: Duration.seconds(spec.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS),
    role,
    logGroup,
    // The functions print JSON lines themselves (Powertools); Lambda's own lines
    // (START/REPORT, crashes) become JSON too, and lines below the level are dropped.
    loggingFormat: LoggingFormat.JSON,
    applicationLogLevelV2: ApplicationLogLevel[deps.settings.logLevel],
    systemLogLevelV2: SystemLogLevel.WARN,
    // Lambda samples and sends the traces itself: no tracing SDK in the bundles.
    tracing: Tracing.ACTIVE,
    // A worker that puts work back on the queue it consumes (a job's next step, a delayed retry) continues one trace,
    // which Lambda's recursive-loop detection stops after about 16 invocations (an import waiting for its upload polls
    // for up to an hour). Those chains are bounded by the jobs' leases and give-up times instead (docs/operations.md).
    ...(requeues && deps.settings.target === 'aws' ? { recursiveLoop: RecursiveLoop.ALLOW } : {}),
    environment: {
      TABLE_NAME: deps.table.tableName,
      // The `service` of every log line and metric: one stack's figures apart from another's.
      POWERTOOLS_SERVICE_NAME: Stack.of(scope).stackName,
      // The feed writer dates each event's expiry by it; GET /v1/events and $connect refuse a cursor past it.
      EVENT_RETENTION_DAYS: String(deps.settings.eventRetentionDays),
      ...(spec.validates ? deps.settings.validator : {}),
      ...spec.environment,
    },
  });

  if (spec.table !== undefined) {
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: [...TABLE_ACTIONS.read, ...(spec.table === 'readWrite' ? TABLE_ACTIONS.write : [])],
        resources: [deps.table.tableArn, `${deps.table.tableArn}/index/*`],
      }),
    );
  }

  // The webhook worker opens endpoint secrets, sealed under the `webhook` context, and nothing else: not the credentials
  // an idempotent create keeps for its replay (the `replay` context), though the worker calls URLs customers chose.
  if (spec.decrypts) fn.addToRolePolicy(decryptUnder(deps.webhookKey, 'webhook'));
  // Encrypt alone: a new secret is sealed with one call (grantEncrypt would add data-key and re-encrypt wildcards).
  if (spec.seals) {
    deps.webhookKey.grant(fn, 'kms:Encrypt');
    // A replay of an idempotent create opens the credential it sealed in its record, and only that: a webhook's own
    // secret is sealed under the `webhook` context, which this statement does not match (shared/util/sealing.ts).
    fn.addToRolePolicy(decryptUnder(deps.webhookKey, 'replay'));
  }
  if (spec.decrypts || spec.seals) fn.addEnvironment('WEBHOOK_KMS_KEY_ID', deps.webhookKey.keyArn);

  for (const name of new Set(spec.sends ?? [])) {
    const queue = deps.queues[name];
    queue.grantSendMessages(fn);
    fn.addEnvironment(queueUrlEnv(name), queue.queueUrl);
  }

  const files = fileAccess(spec.files);
  if (files.length > 0) {
    fn.addToRolePolicy(
      new PolicyStatement({ actions: files.flatMap((a) => FILE_ACTIONS[a]), resources: [deps.filesBucket.arnForObjects('*')] }),
    );
    fn.addEnvironment('FILES_BUCKET', deps.filesBucket.bucketName);
  }
  // What an upload URL is made for: the size and content type it signs, checked against these first.
  if (files.includes('write')) {
    fn.addEnvironment('MAX_FILE_BYTES', String(deps.settings.files.maxBytes));
    fn.addEnvironment('FILE_CONTENT_TYPES', deps.settings.files.contentTypes.join(','));
  }
  return fn;
}
