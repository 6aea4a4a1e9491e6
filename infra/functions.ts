import path from 'node:path';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Architecture } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { readValidatorConfig, VALIDATOR_ENV_VARS } from '../shared/email/validator/config.ts';
import { queueUrlEnv } from '../shared/queues.ts';
import type { QueueName, TableAccess } from '../shared/routes.ts';
import { ESBUILD_TARGET, lambdaRuntime } from './runtime.ts';

export const MEMORY_MB = 256;
export const DEFAULT_TIMEOUT_SECONDS = 10;

/** What a function needs, as declared by a row of the route table. */
export interface FunctionSpec {
  handler: string;
  table?: TableAccess;
  sends?: readonly QueueName[];
  timeoutSeconds?: number;
  environment?: Record<string, string>;
  validates?: boolean;
}

/**
 * The validator's settings come from the environment `cdk deploy` runs in
 * (e.g. `SMTP_PROBE=tcp DNS_SERVERS=10.0.0.2 npx cdk deploy`), checked here so
 * a bad value fails the synth instead of every validation at run time.
 */
export function validatorEnvironment(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  readValidatorConfig(env);
  return Object.fromEntries(VALIDATOR_ENV_VARS.flatMap((name) => (env[name] ? [[name, env[name]!]] : [])));
}

export interface FunctionDeps {
  repoRoot: string;
  functionsDir: string;
  table: ITable;
  queues: Record<QueueName, IQueue>;
}

/** `conversations/list` -> `ConversationsList`, for construct ids. */
export const pascalCase = (s: string) =>
  s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');

export function createFunction(scope: Construct, id: string, spec: FunctionSpec, deps: FunctionDeps): NodejsFunction {
  // An explicit log group (rather than logRetention) avoids the extra
  // custom-resource Lambda that logRetention adds to the stack.
  const logGroup = new LogGroup(scope, `${id}Logs`, {
    retention: RetentionDays.ONE_MONTH,
    removalPolicy: RemovalPolicy.DESTROY,
  });

  const fn = new NodejsFunction(scope, id, {
    entry: path.join(deps.functionsDir, `${spec.handler}.ts`),
    handler: 'handler',
    // Pinned so synth does not depend on the directory cdk is run from.
    projectRoot: deps.repoRoot,
    depsLockFilePath: path.join(deps.repoRoot, 'package-lock.json'),
    runtime: lambdaRuntime(),
    architecture: Architecture.ARM_64,
    memorySize: MEMORY_MB,
    timeout: Duration.seconds(spec.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS),
    logGroup,
    environment: {
      TABLE_NAME: deps.table.tableName,
      NODE_OPTIONS: '--enable-source-maps',
      ...(spec.validates ? validatorEnvironment() : {}),
      ...spec.environment,
    },
    bundling: {
      minify: true,
      sourceMap: true,
      format: OutputFormat.ESM,
      target: ESBUILD_TARGET,
      mainFields: ['module', 'main'],
      // CJS dependencies inside an ESM bundle still call require().
      banner: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
      // Ship the SDK versions the code was tested with, not whatever the runtime bundles.
      externalModules: [],
    },
  });

  if (spec.table === 'read') deps.table.grantReadData(fn);
  else if (spec.table === 'readWrite') deps.table.grantReadWriteData(fn);

  for (const name of new Set(spec.sends ?? [])) {
    const queue = deps.queues[name];
    queue.grantSendMessages(fn);
    fn.addEnvironment(queueUrlEnv(name), queue.queueUrl);
  }
  return fn;
}
