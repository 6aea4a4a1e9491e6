import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Aspects, CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, StreamViewType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Rule, Schedule as EventSchedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { FilterCriteria, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import type { Role } from 'aws-cdk-lib/aws-iam';
import type { Function as Lambda } from 'aws-cdk-lib/aws-lambda';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { BlockPublicAccess, Bucket, BucketEncryption, HttpMethods, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { tableDefinition } from '../shared/db/table-definition.ts';
import { EXPORT_RETENTION_DAYS } from '../shared/files/settings.ts';
import { CORS_MAX_AGE_SECONDS } from '../shared/http/cors.ts';
import { queues, type QueueDefinition } from '../shared/queues.ts';
import {
  schedules,
  streams,
  workers,
  type ApiName,
  type QueueName,
  type Schedule,
  type StreamConsumer,
  type Worker,
} from '../shared/routes.ts';
import { apiNames, buildApi, type BuiltApi } from './api.ts';
import { createFunction, pascalCase, type FunctionDeps } from './functions.ts';
import { apiGatewayLogsRole } from './gateway-account.ts';
import { Monitoring } from './monitoring.ts';
import { AcknowledgedFindings } from './nag.ts';
import { buildRealtime, type BuiltRealtime } from './realtime.ts';
import { FunctionRoles } from './roles.ts';
import { deploySettings, type DeploySettings } from './settings.ts';
import { defaultAccountPlan } from './usage-plans.ts';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface ServerlessMessagingStackProps extends StackProps {
  /** Where `<handler>.ts` entries live; tests point this at stubs. Default `<repo>/functions`. */
  functionsDir?: string;
}

/** AWS: an SQS event source's visibility timeout should be at least six times the function timeout. */
export function assertWorkerFitsQueue(worker: Pick<Worker, 'name' | 'timeoutSeconds'>, queue: QueueDefinition): void {
  if (queue.visibilityTimeoutSeconds < 6 * worker.timeoutSeconds) {
    throw new Error(
      `queue '${queue.name}' visibilityTimeoutSeconds (${queue.visibilityTimeoutSeconds}) must be >= 6 x ` +
        `worker '${worker.name}' timeoutSeconds (${worker.timeoutSeconds})`,
    );
  }
}

export class MessagingAndEmailValidationStack extends Stack {
  readonly table: Table;
  readonly queues: Record<QueueName, Queue>;
  /** Each queue's dead-letter queue, same keys as `queues`. */
  readonly deadLetterQueues: Record<QueueName, Queue>;
  readonly apis = new Map<ApiName, BuiltApi>();
  readonly workerFunctions = new Map<Worker, Lambda>();
  readonly scheduleFunctions = new Map<Schedule, Lambda>();
  readonly scheduleRules = new Map<Schedule, Rule>();
  readonly streamFunctions = new Map<StreamConsumer, Lambda>();
  /** The WebSocket API; absent on LocalStack, whose free edition has none. */
  readonly realtime: BuiltRealtime | undefined;
  /**
   * What Lambda gave up on, from the functions that have no queue of their own: the
   * change-stream batches a consumer kept failing on (their stream coordinates; the
   * records stay in the stream for 24 h) and the scheduled runs that failed.
   */
  readonly failedInvocationsQueue: Queue;
  /** Seals the webhook endpoints' secrets; the delivery worker may decrypt. */
  readonly webhookKey: Key;
  /** The files' private bucket: uploads by presigned PUT, downloads by presigned GET. */
  readonly filesBucket: Bucket;
  readonly settings: DeploySettings;
  readonly monitoring: Monitoring;
  /** API Gateway's account-wide logging role, when this stack sets it. */
  readonly apiGatewayLogsRole: Role | undefined;

  constructor(scope: Construct, id: string, props: ServerlessMessagingStackProps = {}) {
    super(scope, id, props);
    // A dead-letter queue gets its queue's visibility timeout, so one check covers both kinds of worker.
    for (const worker of workers) assertWorkerFitsQueue(worker, queues[worker.queue]);

    this.settings = deploySettings(this);
    this.table = this.createTable();
    const { main, deadLetters } = this.createQueues();
    this.queues = main;
    this.deadLetterQueues = deadLetters;
    this.webhookKey = new Key(this, 'WebhookSecretsKey', {
      description: 'Encrypts webhook endpoint secrets (docs/webhooks.md)',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    new CfnOutput(this, 'WebhookKeyId', { value: this.webhookKey.keyArn, description: 'WEBHOOK_KMS_KEY_ID for the admin command line' });
    this.failedInvocationsQueue = new Queue(this, 'FailedInvocationsQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      queueName: `${this.stackName}-failed-invocations`,
      retentionPeriod: Duration.days(14),
    });
    this.filesBucket = this.createFilesBucket();
    const deps: FunctionDeps = {
      functionsDir: props.functionsDir ?? path.join(REPO_ROOT, 'functions'),
      table: this.table,
      webhookKey: this.webhookKey,
      queues: this.queues,
      filesBucket: this.filesBucket,
      settings: this.settings,
      roles: new FunctionRoles(this),
    };

    const logsAccount = this.settings.apiGatewayCloudWatchRole ? apiGatewayLogsRole(this) : undefined;
    this.apiGatewayLogsRole = logsAccount?.role;
    for (const apiName of apiNames()) {
      const built = buildApi(this, apiName, deps, logsAccount?.account);
      this.apis.set(apiName, built);
      new CfnOutput(this, `${pascalCase(apiName)}ApiUrl`, {
        value: built.baseUrl,
        description: `${apiName} API base URL (append the route table's paths)`,
      });
    }

    // Per-account rate limits; LocalStack has no authorizer to name an account's key.
    if (this.settings.target === 'aws') {
      defaultAccountPlan(
        this,
        [...this.apis.values()].map((built) => built.api),
        this.settings,
      );
    }

    this.realtime = this.settings.target === 'aws' ? buildRealtime(this, deps, logsAccount?.account) : undefined;

    for (const worker of workers) {
      const fn = createFunction(this, `${pascalCase(worker.name)}WorkerFn`, worker, deps, {
        ownRole: true,
        requeues: !worker.deadLetters && (worker.sends ?? []).includes(worker.queue),
      });
      const source = (worker.deadLetters ? this.deadLetterQueues : this.queues)[worker.queue];
      // SqsEventSource grants the consume actions on exactly this queue. maxConcurrency
      // caps how much of the account's Lambda concurrency a backlog can take from the APIs.
      fn.addEventSource(
        new SqsEventSource(source, { batchSize: worker.batchSize, reportBatchItemFailures: true, maxConcurrency: worker.maxConcurrency }),
      );
      this.workerFunctions.set(worker, fn);
    }

    for (const consumer of streams) {
      // The realtime fan-out posts to the WebSocket API's connections: nothing to do without one.
      if (consumer.realtime && !this.realtime) continue;
      const fn = createFunction(this, `${pascalCase(consumer.name)}StreamFn`, consumer, deps, { ownRole: true });
      if (consumer.realtime && this.realtime) {
        fn.addEnvironment('REALTIME_ENDPOINT', this.realtime.stage.callbackUrl);
        this.realtime.stage.grantManagementApiAccess(fn);
      }
      fn.addEventSource(
        new DynamoEventSource(this.table, {
          startingPosition: StartingPosition.TRIM_HORIZON,
          batchSize: consumer.batchSize,
          parallelizationFactor: consumer.parallelization,
          reportBatchItemFailures: true,
          bisectBatchOnError: true,
          retryAttempts: consumer.retryAttempts,
          onFailure: new SqsDlq(this.failedInvocationsQueue),
          // Only the changes that can be events invoke the function.
          filters: [
            FilterCriteria.filter({
              ...(consumer.insertsOnly ? { eventName: ['INSERT'] } : {}),
              dynamodb: { Keys: { sk: { S: [...consumer.sortKeys.exact, ...consumer.sortKeys.prefix.map((prefix) => ({ prefix }))] } } },
            }),
          ],
        }),
      );
      this.streamFunctions.set(consumer, fn);
    }

    for (const schedule of schedules) {
      const id = pascalCase(schedule.name);
      const fn = createFunction(this, `${id}ScheduleFn`, schedule, deps, { ownRole: true });
      const rule = new Rule(this, `${id}ScheduleRule`, {
        description: `Runs ${schedule.handler} every ${schedule.everyMinutes} minute(s)`,
        schedule: EventSchedule.rate(Duration.minutes(schedule.everyMinutes)),
        // Adds the lambda:InvokeFunction permission for events.amazonaws.com, scoped to this rule.
        targets: [new LambdaFunction(fn)],
      });
      // A failed run goes to the failed-invocations queue, which alarms. Not retried: the next
      // run, a schedule period later, does the same work, and a run older than that is stale.
      fn.configureAsyncInvoke({
        onFailure: new SqsDestination(this.failedInvocationsQueue),
        retryAttempts: 0,
        maxEventAge: Duration.minutes(schedule.everyMinutes),
      });
      this.scheduleFunctions.set(schedule, fn);
      this.scheduleRules.set(schedule, rule);
    }

    new CfnOutput(this, 'TableName', { value: this.table.tableName });

    this.monitoring = new Monitoring(this, 'Monitoring', {
      apis: new Map([...this.apis].map(([name, built]) => [name, built.api])),
      functions: this.namedFunctions(),
      queues: this.queues,
      deadLetterQueues: this.deadLetterQueues,
      streamFunctions: new Map([...this.streamFunctions].map(([c, fn]) => [c.name, fn])),
      failedInvocationsQueue: this.failedInvocationsQueue,
      realtime: this.realtime,
      settings: this.settings,
    });
    if (this.monitoring.dashboard) new CfnOutput(this, 'DashboardName', { value: this.monitoring.dashboard.dashboardName });
    // cdk-nag's findings this stack accepts, found by construct type at synth (infra/nag.ts).
    Aspects.of(this).add(new AcknowledgedFindings());
  }

  /** Every function by a name a person recognises: its handler, or `<api>-authorizer` / `<api>-fallback`. */
  namedFunctions(): Map<string, Lambda> {
    const named = new Map<string, Lambda>();
    for (const [api, built] of this.apis) {
      if (built.authorizerFunction) named.set(`${api}-authorizer`, built.authorizerFunction);
      named.set(`${api}-fallback`, built.fallbackFunction);
      for (const [route, fn] of built.routeFunctions) named.set(route.handler.replace('/', '-'), fn);
    }
    for (const [worker, fn] of this.workerFunctions) named.set(`worker-${worker.name}`, fn);
    for (const [schedule, fn] of this.scheduleFunctions) named.set(`schedule-${schedule.name}`, fn);
    for (const [consumer, fn] of this.streamFunctions) named.set(`stream-${consumer.name}`, fn);
    if (this.realtime) {
      named.set('realtime-authorizer', this.realtime.authorizerFunction);
      for (const [route, fn] of this.realtime.routeFunctions) named.set(route.handler.replace('/', '-'), fn);
    }
    return named;
  }

  private createTable(): Table {
    const key = (name: string) => ({ name, type: AttributeType.STRING });
    const table = new Table(this, 'Table', {
      partitionKey: key(tableDefinition.partitionKey),
      sortKey: key(tableDefinition.sortKey),
      billingMode: BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: tableDefinition.timeToLiveAttribute,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      stream: StreamViewType[tableDefinition.streamViewType],
      removalPolicy: RemovalPolicy.RETAIN,
      // Retained when the stack goes; protected from a DeleteTable by hand as well (the console, a script), on AWS.
      deletionProtection: this.settings.target === 'aws',
    });
    for (const index of tableDefinition.globalSecondaryIndexes) {
      table.addGlobalSecondaryIndex({
        indexName: index.indexName,
        partitionKey: key(index.partitionKey),
        sortKey: key(index.sortKey),
        projectionType: ProjectionType.ALL,
      });
    }
    return table;
  }

  /**
   * Private and encrypted, reached over TLS only, and only through URLs the
   * functions presign. Browsers upload from the CORS origins straight to it.
   * Three lifecycle rules clean up what no function will: uploads never
   * attached (tagged `state=unattached` by their upload URL, retagged on
   * first attach) after a day, multipart uploads left incomplete, and a
   * list's CSV exports (`exports/`) once their record has expired too.
   */
  private createFilesBucket(): Bucket {
    const origins = this.settings.corsOrigins;
    return new Bucket(this, 'FilesBucket', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      removalPolicy: RemovalPolicy.RETAIN,
      cors: origins.length
        ? [
            {
              allowedOrigins: origins,
              allowedMethods: [HttpMethods.PUT, HttpMethods.GET, HttpMethods.HEAD],
              // What an upload URL signs besides the length (which a browser sets itself).
              allowedHeaders: ['content-type', 'x-amz-tagging', 'if-none-match'],
              exposedHeaders: ['ETag'],
              maxAge: CORS_MAX_AGE_SECONDS,
            },
          ]
        : undefined,
      lifecycleRules: [
        { id: 'expire-unattached-uploads', tagFilters: { state: 'unattached' }, expiration: Duration.days(1) },
        { id: 'abort-incomplete-multipart-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
        { id: 'expire-list-exports', prefix: 'exports/', expiration: Duration.days(EXPORT_RETENTION_DAYS) },
      ],
    });
  }

  private createQueues(): { main: Record<QueueName, Queue>; deadLetters: Record<QueueName, Queue> } {
    const entries = Object.entries(queues) as [QueueName, QueueDefinition][];
    const main = {} as Record<QueueName, Queue>;
    const deadLetters = {} as Record<QueueName, Queue>;
    for (const [key, def] of entries) {
      const id = pascalCase(key);
      const common = {
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        // Same on the dead-letter queue: a worker may consume it (`deadLetters: true`).
        visibilityTimeout: Duration.seconds(def.visibilityTimeoutSeconds),
      };
      const dlq = new Queue(this, `${id}DeadLetterQueue`, {
        ...common,
        queueName: `${this.stackName}-${def.name}-dlq`,
        retentionPeriod: Duration.days(14),
      });
      const queue = new Queue(this, `${id}Queue`, {
        ...common,
        queueName: `${this.stackName}-${def.name}`,
        deadLetterQueue: { queue: dlq, maxReceiveCount: def.maxReceiveCount },
      });
      new CfnOutput(this, `${id}QueueUrl`, { value: queue.queueUrl });
      main[key] = queue;
      deadLetters[key] = dlq;
    }
    return { main, deadLetters };
  }
}
