import { readFileSync } from 'node:fs';
import { Stack, type CfnElement } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import { AUTHORIZATION_PATTERN, generateSecretKey, generateToken } from '../../shared/data/tokens.ts';
import { tableDefinition } from '../../shared/db/table-definition.ts';
import { queues, queueUrlEnv, type QueueDefinition } from '../../shared/queues.ts';
import { authorizer, realtime, routes, schedules, streams, workers, type ApiName, type QueueName } from '../../shared/routes.ts';
import { FunctionRoles, MAX_FUNCTIONS_PER_ROLE } from '../../infra/roles.ts';
import { DEPLOY_NODE_MAJOR, lambdaRuntime, parseMajor } from '../../infra/runtime.ts';
import { assertWorkerFitsQueue } from '../../infra/stack.ts';
import { logicalIdOf, synthStack, testApp } from '../steps/cdk-app.ts';

const { stack, template } = synthStack();
const logicalId = (c: { node: { defaultChild?: unknown } }) => logicalIdOf(stack, c);
const apiNames = [...new Set(routes.map((r) => r.api))];
const pascal = (s: string) => s.replace(/(^|[^a-z0-9]+)([a-z0-9])/gi, (_, __, c: string) => c.toUpperCase());
const getAtt = (id: string) => ({ 'Fn::GetAtt': [id, 'Arn'] });
const apiOf = (name: ApiName) => stack.apis.get(name)!;
// CloudFormation JSON, read by assertions: `any` keeps them short.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Cfn = any;
const resources = (type: string) => template.findResources(type) as Record<string, { Properties: Cfn }>;

/** Resource logical id -> path, rebuilt from the template's ParentId chain. */
function resourcePaths(): Map<string, string> {
  const all = resources('AWS::ApiGateway::Resource');
  const paths = new Map<string, string>();
  const resolve = (id: string): string => {
    if (!paths.has(id)) {
      const { ParentId, PathPart } = all[id]!.Properties;
      const parent = ParentId.Ref ? resolve(ParentId.Ref) : '';
      paths.set(id, `${parent}/${PathPart}`);
    }
    return paths.get(id)!;
  };
  Object.keys(all).forEach(resolve);
  return paths;
}

interface MethodRow {
  api: string;
  path: string;
  httpMethod: string;
  authorizationType: string;
  authorizerId?: string;
  integration: Cfn;
}
function methods(): MethodRow[] {
  const paths = resourcePaths();
  return Object.values(resources('AWS::ApiGateway::Method')).map(({ Properties: p }) => ({
    api: p.RestApiId.Ref,
    path: p.ResourceId.Ref ? paths.get(p.ResourceId.Ref)! : '/',
    httpMethod: p.HttpMethod,
    authorizationType: p.AuthorizationType,
    authorizerId: p.AuthorizerId?.Ref,
    integration: p.Integration,
  }));
}

function policyActions(fn: IFunction): string[] {
  const role = logicalId(fn.role!);
  return Object.values(resources('AWS::IAM::Policy'))
    .filter(({ Properties: p }) => p.Roles.some((r: Cfn) => r.Ref === role))
    .flatMap(({ Properties: p }) => p.PolicyDocument.Statement)
    .flatMap((s: Cfn) => (Array.isArray(s.Action) ? s.Action : [s.Action]));
}

/** sqs action -> logical ids of the queues it is allowed on (statements may be merged by minimizePolicies). */
function sqsGrants(fn: IFunction): Map<string, Set<string>> {
  const role = logicalId(fn.role!);
  const grants = new Map<string, Set<string>>();
  const statements = Object.values(resources('AWS::IAM::Policy'))
    .filter(({ Properties: p }) => p.Roles.some((r: Cfn) => r.Ref === role))
    .flatMap(({ Properties: p }) => p.PolicyDocument.Statement);
  for (const s of statements) {
    const actions: string[] = Array.isArray(s.Action) ? s.Action : [s.Action];
    const targets: Cfn[] = Array.isArray(s.Resource) ? s.Resource : [s.Resource];
    for (const a of actions.filter((x) => x.startsWith('sqs:'))) {
      const set = grants.get(a) ?? new Set<string>();
      for (const t of targets) set.add(t['Fn::GetAtt']?.[0] ?? JSON.stringify(t));
      grants.set(a, set);
    }
  }
  return grants;
}

function envOf(fn: IFunction): Record<string, unknown> {
  return resources('AWS::Lambda::Function')[logicalId(fn)]!.Properties.Environment?.Variables ?? {};
}

/** Every function the stack built, with the route-table row it came from. */
function allFunctions() {
  const rows: { fn: IFunction; table?: string; sends?: readonly QueueName[] }[] = [];
  for (const built of stack.apis.values()) {
    rows.push({ fn: built.authorizerFunction!, table: authorizer.table });
    rows.push({ fn: built.fallbackFunction });
    for (const [route, fn] of built.routeFunctions) rows.push({ fn, table: route.table, sends: route.sends });
  }
  for (const [worker, fn] of stack.workerFunctions) rows.push({ fn, table: worker.table, sends: worker.sends });
  for (const [schedule, fn] of stack.scheduleFunctions) rows.push({ fn, table: schedule.table, sends: schedule.sends });
  for (const [consumer, fn] of stack.streamFunctions) rows.push({ fn, table: consumer.table, sends: consumer.sends });
  rows.push({ fn: stack.realtime!.authorizerFunction, table: realtime.authorizer.table });
  for (const [route, fn] of stack.realtime!.routeFunctions) rows.push({ fn, table: route.table });
  return rows;
}

describe('DynamoDB table', () => {
  it('matches tableDefinition, pay-per-request, PITR, retained and protected from deletion', () => {
    const attributeNames = [
      tableDefinition.partitionKey,
      tableDefinition.sortKey,
      ...tableDefinition.globalSecondaryIndexes.flatMap((g) => [g.partitionKey, g.sortKey]),
    ];
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
    template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: {
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: [
          { AttributeName: tableDefinition.partitionKey, KeyType: 'HASH' },
          { AttributeName: tableDefinition.sortKey, KeyType: 'RANGE' },
        ],
        AttributeDefinitions: Match.arrayWith(attributeNames.map((n) => ({ AttributeName: n, AttributeType: 'S' }))),
        GlobalSecondaryIndexes: tableDefinition.globalSecondaryIndexes.map((g) => ({
          IndexName: g.indexName,
          KeySchema: [
            { AttributeName: g.partitionKey, KeyType: 'HASH' },
            { AttributeName: g.sortKey, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        })),
        TimeToLiveSpecification: { AttributeName: tableDefinition.timeToLiveAttribute, Enabled: true },
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        DeletionProtectionEnabled: true,
      },
    });
  });
});

describe('SQS queues', () => {
  const defs = Object.entries(queues) as [QueueName, QueueDefinition][];

  it('creates a queue and a dead-letter queue per definition', () => {
    // And the change stream's dead-letter queue.
    template.resourceCountIs('AWS::SQS::Queue', defs.length * 2 + 1);
    for (const [key, def] of defs) {
      const queue = stack.queues[key];
      expect(stack.deadLetterQueues[key]).toBe(queue.deadLetterQueue!.queue);
      template.hasResourceProperties('AWS::SQS::Queue', {
        QueueName: `test-stack-${def.name}`,
        VisibilityTimeout: def.visibilityTimeoutSeconds,
        SqsManagedSseEnabled: true,
        RedrivePolicy: {
          deadLetterTargetArn: { 'Fn::GetAtt': [logicalId(queue.deadLetterQueue!.queue), 'Arn'] },
          maxReceiveCount: def.maxReceiveCount,
        },
      });
      template.hasResourceProperties('AWS::SQS::Queue', {
        QueueName: `test-stack-${def.name}-dlq`,
        SqsManagedSseEnabled: true,
        MessageRetentionPeriod: 14 * 24 * 3600,
      });
      template.hasOutput(`${pascal(key)}QueueUrl`, { Value: { Ref: logicalId(queue) } });
    }
  });

  it('gives each dead-letter queue the visibility timeout of its queue (a worker may consume it)', () => {
    const sqsQueues = resources('AWS::SQS::Queue');
    for (const [key, def] of defs) {
      const dlq = sqsQueues[logicalId(stack.deadLetterQueues[key])]!.Properties;
      expect(dlq.QueueName).toBe(`test-stack-${def.name}-dlq`);
      expect(dlq.VisibilityTimeout).toBe(def.visibilityTimeoutSeconds);
      expect(dlq.RedrivePolicy).toBeUndefined();
    }
  });
});

describe('Lambda functions', () => {
  it('creates exactly one function per route, authorizer and fallback per API, worker, schedule, stream consumer and realtime route', () => {
    const expected = routes.length + apiNames.length * 2 + workers.length + schedules.length + streams.length + realtime.routes.length + 1;
    template.resourceCountIs('AWS::Lambda::Function', expected);
    expect(allFunctions()).toHaveLength(expected);
  });

  it('runs every function on nodejs24.x (the major of .nvmrc), arm64, with the table name and without source maps at init', () => {
    // nodejs22.x is deprecated on 30 April 2027 (docs/testing.md, Why Node 24).
    expect(DEPLOY_NODE_MAJOR).toBe(24);
    for (const { Properties: p } of Object.values(resources('AWS::Lambda::Function'))) {
      expect(p.Runtime).toBe('nodejs24.x');
      expect(p.Architectures).toEqual(['arm64']);
      expect(p.MemorySize).toBe(256);
      // --enable-source-maps would load each bundle's map at every cold start (docs/performance.md).
      expect(p.Environment.Variables.NODE_OPTIONS).toBeUndefined();
      expect(p.Environment.Variables.TABLE_NAME).toEqual({ Ref: logicalId(stack.table) });
      expect(p.LoggingConfig?.LogGroup).toBeDefined();
    }
  });

  it('reads the Node major as a bare number and fails the synth on a runtime aws-cdk-lib lacks', () => {
    expect(parseMajor('24\n')).toBe(24);
    expect(() => parseMajor('v24')).toThrow(/bare Node major/);
    expect(() => parseMajor('lts/*')).toThrow(/bare Node major/);
    expect(lambdaRuntime(22).name).toBe('nodejs22.x');
    expect(lambdaRuntime(22).isVariable).toBeFalsy();
    expect(() => lambdaRuntime(7)).toThrow(/no Lambda runtime 'nodejs7.x'/);
  });

  it('uses the timeout from the route table (default 10 s)', () => {
    const timeout = (fn: IFunction) => resources('AWS::Lambda::Function')[logicalId(fn)]!.Properties.Timeout;
    for (const built of stack.apis.values()) {
      for (const [route, fn] of built.routeFunctions) expect(timeout(fn)).toBe(route.timeoutSeconds ?? 10);
    }
    for (const [worker, fn] of stack.workerFunctions) expect(timeout(fn)).toBe(worker.timeoutSeconds);
    for (const [schedule, fn] of stack.scheduleFunctions) expect(timeout(fn)).toBe(schedule.timeoutSeconds);
  });

  it('tells each function which API it serves, only for the authorizer and fallback', () => {
    for (const [api, built] of stack.apis) {
      expect(envOf(built.authorizerFunction!).API_NAME).toBe(api);
      expect(envOf(built.fallbackFunction).API_NAME).toBe(api);
    }
  });
});

describe('least privilege', () => {
  const writeActions = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'];

  it('grants table reads, and writes only to readWrite rows; none to the fallback', () => {
    // Both APIs contribute read-only rows, so the read branch below is exercised for each.
    for (const api of apiNames)
      expect(
        routes.some((r) => r.api === api && r.table === 'read'),
        api,
      ).toBe(true);
    for (const { fn, table } of allFunctions()) {
      const actions = policyActions(fn);
      if (table === undefined) {
        expect(actions.filter((a) => a.startsWith('dynamodb:'))).toEqual([]);
        continue;
      }
      expect(actions).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query']));
      // No function scans: a Scan reads every tenant's items
      expect(actions).not.toContain('dynamodb:Scan');
      if (table === 'read') for (const a of writeActions) expect(actions).not.toContain(a);
      else expect(actions).toEqual(expect.arrayContaining(writeActions));
    }
  });

  it('lets only functions whose row sends to a queue send, and gives them its URL', () => {
    for (const { fn, sends = [] } of allFunctions()) {
      // A stream consumer's or a schedule's failure destination gets what Lambda gives up on: it sends there too.
      const givesUp = [...stack.streamFunctions.values(), ...stack.scheduleFunctions.values()].includes(fn as never);
      expect(policyActions(fn).includes('sqs:SendMessage')).toBe(sends.length > 0 || givesUp);
      // ...and only to the queues the row names.
      const sendTargets = [...(sqsGrants(fn).get('sqs:SendMessage') ?? [])].sort();
      const failureDestination = givesUp ? [logicalId(stack.failedInvocationsQueue)] : [];
      expect(sendTargets).toEqual([...[...new Set(sends)].map((q) => logicalId(stack.queues[q])), ...failureDestination].sort());
      const env = envOf(fn);
      for (const q of Object.keys(queues) as QueueName[]) {
        if (sends.includes(q)) expect(env[queueUrlEnv(q)]).toEqual({ Ref: logicalId(stack.queues[q]) });
        else expect(env).not.toHaveProperty(queueUrlEnv(q));
      }
    }
  });

  it("lets a worker that puts work back on its own queue continue past Lambda's recursive-loop detection, and no other function", () => {
    const requeuing = new Set(
      [...stack.workerFunctions].filter(([w]) => !w.deadLetters && (w.sends ?? []).includes(w.queue)).map(([, fn]) => logicalId(fn)),
    );
    // The validation worker (greylisting, deadlines), the jobs' workers (purges, imports, fan-outs) and the webhook retries
    expect(requeuing.size).toBe(4);
    for (const [id, fn] of Object.entries(resources('AWS::Lambda::Function'))) {
      expect(fn.Properties.RecursiveLoop, id).toBe(requeuing.has(id) ? 'Allow' : undefined);
    }
  });

  it('lets only workers consume, and only from their event source queue', () => {
    const consumers = new Map([...stack.workerFunctions].map(([w, fn]) => [fn as IFunction, w]));
    for (const { fn } of allFunctions()) {
      const receive = [...(sqsGrants(fn).get('sqs:ReceiveMessage') ?? [])];
      const worker = consumers.get(fn);
      if (!worker) {
        expect(receive).toEqual([]);
        continue;
      }
      const source = (worker.deadLetters ? stack.deadLetterQueues : stack.queues)[worker.queue];
      expect(receive).toEqual([logicalId(source)]);
      expect([...(sqsGrants(fn).get('sqs:DeleteMessage') ?? [])]).toEqual([logicalId(source)]);
    }
  });
});

describe('the files bucket', () => {
  const bucketId = () => logicalId(stack.filesBucket);
  const bucket = () => resources('AWS::S3::Bucket')[bucketId()]!;
  const fnOf = (handler: string) => [...stack.apis.get('messaging')!.routeFunctions].find(([r]) => r.handler === handler)![1];
  /** s3 action -> the resources it is allowed on, for one function's role. */
  function s3Grants(fn: IFunction): Map<string, string[]> {
    const role = logicalId(fn.role!);
    const grants = new Map<string, string[]>();
    for (const statement of Object.values(resources('AWS::IAM::Policy'))
      .filter(({ Properties: p }) => p.Roles.some((r: Cfn) => r.Ref === role))
      .flatMap(({ Properties: p }) => p.PolicyDocument.Statement)) {
      const actions: string[] = Array.isArray(statement.Action) ? statement.Action : [statement.Action];
      const targets: Cfn[] = Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];
      for (const a of actions.filter((x) => x.startsWith('s3:')))
        grants.set(a, [...(grants.get(a) ?? []), ...targets.map((t) => JSON.stringify(t))]);
    }
    return grants;
  }
  const objects = () => JSON.stringify({ 'Fn::Join': ['', [getAtt(bucketId()), '/*']] });

  it('is one private, encrypted bucket that only TLS reaches, kept when the stack goes', () => {
    template.resourceCountIs('AWS::S3::Bucket', 1);
    template.hasResource('AWS::S3::Bucket', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    expect(bucket().Properties).toMatchObject({
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
    });
    const policy = Object.values(resources('AWS::S3::BucketPolicy')).find((p) => p.Properties.Bucket.Ref === bucketId())!;
    expect(policy.Properties.PolicyDocument.Statement).toContainEqual(
      expect.objectContaining({
        Effect: 'Deny',
        Action: 's3:*',
        Principal: { AWS: '*' },
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
      }),
    );
  });

  it('expires uploads never attached after a day, and aborts multipart uploads left incomplete', () => {
    const rules: Cfn[] = bucket().Properties.LifecycleConfiguration.Rules;
    expect(rules).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Status: 'Enabled', TagFilters: [{ Key: 'state', Value: 'unattached' }], ExpirationInDays: 1 }),
        expect.objectContaining({ Status: 'Enabled', AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } }),
      ]),
    );
    // The tag filter is the whole condition of the first: no prefix narrows it, and no other rule expires files.
    const expiring = rules.filter((r) => r.ExpirationInDays !== undefined);
    expect(expiring.filter((r) => r.Prefix === undefined)).toHaveLength(1);
    expect(expiring.filter((r) => r.Prefix !== undefined).map((r) => r.Prefix)).toEqual(['exports/']);
  });

  it("expires a list's CSV exports after 7 days, and nothing else by that rule", () => {
    const rules: Cfn[] = bucket().Properties.LifecycleConfiguration.Rules;
    expect(rules).toContainEqual(expect.objectContaining({ Status: 'Enabled', Prefix: 'exports/', ExpirationInDays: 7 }));
    expect(rules.find((r) => r.Prefix === 'exports/')?.TagFilters).toBeUndefined();
  });

  it('lets browsers at the CORS origins upload and download, and none without them', () => {
    expect(bucket().Properties.CorsConfiguration).toBeUndefined();
    const withCors = synthStack({ CORS_ORIGINS: 'https://app.example.com' }, 'CorsFiles').template;
    const [cors] = Object.values(withCors.findResources('AWS::S3::Bucket')) as { Properties: Cfn }[];
    expect(cors!.Properties.CorsConfiguration.CorsRules).toEqual([
      {
        AllowedOrigins: ['https://app.example.com'],
        AllowedMethods: ['PUT', 'GET', 'HEAD'],
        AllowedHeaders: ['content-type', 'x-amz-tagging', 'if-none-match'],
        ExposedHeaders: ['ETag'],
        MaxAge: 600,
      },
    ]);
  });

  it("grants each function exactly the object actions of its row's files, on the bucket's objects, and nothing to the others", () => {
    const expected = { read: ['s3:GetObject'], write: ['s3:PutObject', 's3:PutObjectTagging'], delete: ['s3:DeleteObject'] };
    const rows: { fn: IFunction; files?: readonly ('read' | 'write' | 'delete')[] }[] = [];
    for (const built of stack.apis.values()) for (const [route, fn] of built.routeFunctions) rows.push({ fn, files: route.files });
    for (const [row, fn] of [...stack.workerFunctions, ...stack.streamFunctions, ...stack.scheduleFunctions])
      rows.push({ fn, files: row.files });
    for (const { fn, files = [] } of rows) {
      const grants = s3Grants(fn);
      expect([...grants.keys()].sort(), fn.node.id).toEqual(files.flatMap((a) => expected[a]).sort());
      for (const targets of grants.values()) expect(new Set(targets)).toEqual(new Set([objects()]));
      const env = envOf(fn);
      if (files.length) expect(env.FILES_BUCKET).toEqual({ Ref: bucketId() });
      else expect(env).not.toHaveProperty('FILES_BUCKET');
      expect(env.MAX_FILE_BYTES !== undefined, fn.node.id).toBe(files.includes('write'));
    }
    // The cases the files API turns on.
    expect([...s3Grants(fnOf('files/create')).keys()].sort()).toEqual(['s3:PutObject', 's3:PutObjectTagging']);
    expect([...s3Grants(fnOf('messages/get')).keys()]).toEqual(['s3:GetObject']);
    expect(s3Grants(fnOf('conversations/list')).size).toBe(0);
    expect(JSON.stringify(policyActions(fnOf('conversations/list')))).not.toContain('s3:');
    // No wildcard action and no bucket-level action anywhere.
    const all = Object.values(resources('AWS::IAM::Policy')).flatMap(({ Properties: p }) => p.PolicyDocument.Statement);
    const s3Actions = all
      .flatMap((st: Cfn) => (Array.isArray(st.Action) ? st.Action : [st.Action]))
      .filter((a: string) => a.startsWith('s3:'));
    expect(new Set(s3Actions)).toEqual(new Set(['s3:GetObject', 's3:PutObject', 's3:PutObjectTagging', 's3:DeleteObject']));
  });

  it('tells the upload URL makers the largest file and the allowed content types, from the deploy settings', () => {
    expect(envOf(fnOf('files/create'))).toMatchObject({ MAX_FILE_BYTES: '26214400', FILE_CONTENT_TYPES: '' });
    const chosen = synthStack({ MAX_FILE_BYTES: '1048576', FILE_CONTENT_TYPES: 'image/png, Image/JPEG' }, 'FilesSettings').stack;
    const fn = [...chosen.apis.get('messaging')!.routeFunctions].find(([r]) => r.handler === 'files/create')![1];
    const env =
      Template.fromStack(chosen).findResources('AWS::Lambda::Function')[chosen.getLogicalId(fn.node.defaultChild as CfnElement)]!.Properties
        .Environment.Variables;
    expect(env).toMatchObject({ MAX_FILE_BYTES: '1048576', FILE_CONTENT_TYPES: 'image/png,image/jpeg' });
    expect(() => synthStack({ MAX_FILE_BYTES: '0' }, 'BadMax')).toThrow(/MAX_FILE_BYTES must be a positive integer/);
    expect(() => synthStack({ FILE_CONTENT_TYPES: 'png' }, 'BadTypes')).toThrow(/FILE_CONTENT_TYPES must be a comma-separated list/);
  });
});

describe('function roles', () => {
  const profileOf = ({
    table,
    sends = [],
    decrypts,
    seals,
    manages,
    files = [],
  }: {
    table?: string;
    sends?: readonly string[];
    decrypts?: boolean;
    seals?: boolean;
    manages?: boolean;
    files?: readonly string[];
  }) =>
    JSON.stringify([
      table ?? null,
      [...new Set(sends)].sort(),
      decrypts === true,
      seals === true,
      manages === true,
      [...new Set(files)].sort(),
    ]);
  const rows = () => {
    const out: { fn: IFunction; profile: string }[] = [];
    for (const built of stack.apis.values()) {
      out.push({ fn: built.authorizerFunction!, profile: profileOf(authorizer) });
      out.push({ fn: built.fallbackFunction, profile: profileOf({}) });
      for (const [route, fn] of built.routeFunctions) out.push({ fn, profile: profileOf(route) });
    }
    out.push({ fn: stack.realtime!.authorizerFunction, profile: profileOf(realtime.authorizer) });
    for (const [route, fn] of stack.realtime!.routeFunctions) out.push({ fn, profile: profileOf(route) });
    return out;
  };
  const eventDriven = () => [...stack.workerFunctions.values(), ...stack.streamFunctions.values(), ...stack.scheduleFunctions.values()];

  it('gives the API functions one role per grant profile: the same role for the same grants, another for any difference', () => {
    const roleOf = (fn: IFunction) => logicalId(fn.role!);
    const byProfile = new Map<string, Set<string>>();
    for (const { fn, profile } of rows()) byProfile.set(profile, (byProfile.get(profile) ?? new Set()).add(roleOf(fn)));
    for (const [profile, roles] of byProfile) expect([...roles], profile).toHaveLength(1);
    const roles = [...byProfile.values()].map((r) => [...r][0]);
    expect(new Set(roles).size).toBe(byProfile.size);
    // Shared in practice: the read-only routes and the authorizers, for one.
    expect(byProfile.size).toBeLessThan(rows().length / 2);
  });

  it('gives a worker, a stream consumer and a schedule a role of its own: its event source or failure destination grants are its alone', () => {
    const shared = new Set(rows().map(({ fn }) => logicalId(fn.role!)));
    const own = eventDriven().map((fn) => logicalId(fn.role!));
    expect(new Set(own).size).toBe(own.length);
    for (const role of own) expect(shared.has(role)).toBe(false);
    // Every role of the template is one of these, or API Gateway's account-wide logging role.
    template.resourceCountIs('AWS::IAM::Role', shared.size + own.length + 1);
  });

  it("splits a profile with more members than one role's inline policy can name log groups for", () => {
    const scope = new Stack(testApp(), 'Roles');
    const roles = new FunctionRoles(scope);
    const members = Array.from({ length: MAX_FUNCTIONS_PER_ROLE + 1 }, () => roles.roleFor({ table: 'read' }));
    expect(new Set(members.slice(0, MAX_FUNCTIONS_PER_ROLE)).size).toBe(1);
    expect(members.at(-1)).not.toBe(members[0]);
    expect(roles.roleFor({ table: 'read', sends: ['purge', 'purge'] })).toBe(roles.roleFor({ table: 'read', sends: ['purge'] }));
    expect(roles.roleFor({ table: 'read' }, 'Own')).not.toBe(members.at(-1));
  });
});

/**
 * CloudFormation refuses a stack of more than 500 resources. 40 are kept
 * below that for a change that adds several at once (a worker with its queue
 * family is about ten); docs/deploying.md ("Resource budget") has the
 * arithmetic of what still fits, and why this was 450 until CSV imports and
 * exports: the next addition splits the stack instead.
 */
const RESOURCE_BUDGET = 460;

describe('resource budget', () => {
  it(`stays within ${RESOURCE_BUDGET} resources, under CloudFormation's 500 per stack`, () => {
    const count = Object.keys(template.toJSON().Resources).length;
    expect(count).toBeLessThanOrEqual(RESOURCE_BUDGET);
  });

  it("fits CloudFormation's 500 with every optional resource: CORS preflights, the dashboard, an alarm email", () => {
    const { template: largest } = synthStack({ CORS_ORIGINS: 'https://app.example.com', dashboard: 'true', alarmEmail: 'ops@example.com' });
    // CDK adds its metadata resource to the deployed template.
    expect(Object.keys(largest.toJSON().Resources).length + 1).toBeLessThanOrEqual(500);
  });

  it('adds to it per function only the function, its log group and what invokes it', () => {
    const functions = allFunctions().length;
    // One log group per function, and each stage's access log.
    template.resourceCountIs('AWS::Logs::LogGroup', functions + apiNames.length + 1);
    // One invoke permission per route (its stage's method only), the fallback's and the authorizer's per API,
    // the realtime routes' and authorizer's, the schedules' rules.
    template.resourceCountIs(
      'AWS::Lambda::Permission',
      routes.length + 2 * apiNames.length + realtime.routes.length + 1 + schedules.length,
    );
    // Alarms watch families, not functions (docs/operations.md, Alarms).
    expect(Object.keys(resources('AWS::CloudWatch::Alarm')).length).toBeLessThan(functions / 2);
  });
});

describe('REST APIs', () => {
  it('creates one RestApi per API in the route table, deployed to prod with throttling', () => {
    template.resourceCountIs('AWS::ApiGateway::RestApi', apiNames.length);
    template.resourceCountIs('AWS::ApiGateway::Stage', apiNames.length);
    template.allResourcesProperties('AWS::ApiGateway::Stage', {
      StageName: 'prod',
      MethodSettings: Match.arrayWith([
        Match.objectLike({ HttpMethod: '*', ResourcePath: '/*', ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 }),
      ]),
    });
    for (const api of apiNames) {
      template.hasResourceProperties('AWS::ApiGateway::RestApi', { Name: `test-stack-${api}` });
      const output = template.findOutputs(`${pascal(api)}ApiUrl`);
      expect(Object.keys(output)).toHaveLength(1);
      // Base URL of this API's own RestApi; the route paths are appended, so no trailing slash.
      expect(JSON.stringify(Object.values(output)[0])).toContain(JSON.stringify({ Ref: logicalId(apiOf(api).api) }));
      expect(JSON.stringify(Object.values(output)[0])).toMatch(/\/prod"\]\]\}\}$/);
    }
    // Outputs other stacks and scripts read by name.
    expect(
      Object.keys(template.findOutputs('*'))
        .filter((k) => k.endsWith('ApiUrl'))
        .sort(),
    ).toEqual(apiNames.map((a) => `${pascal(a)}ApiUrl`).sort());
    template.hasOutput('TableName', { Value: { Ref: logicalId(stack.table) } });
  });

  it('lists every output in docs/deploying.md, and nothing else there', () => {
    // Given the list under "The stack (`infra/`) prints these outputs:"
    const docs = readFileSync('docs/deploying.md', 'utf8');
    const list = docs.slice(docs.indexOf('prints these outputs:')).split('\n\n')[1]!;
    const documented = [...list.matchAll(/^- `(\w+)`/gm)].map((m) => m[1]!);
    // Then it names exactly the stack's outputs (but the endpoints CDK adds to each REST API, which it mentions after the
    // list), the dashboard's included, which is there with `-c dashboard=true`
    const withDashboard = synthStack({ dashboard: 'true' }, 'OutputsStack').template;
    const outputs = Object.keys(withDashboard.findOutputs('*')).filter((name) => !/^\w+ApiEndpoint[0-9A-F]{8}$/.test(name));
    expect(documented.length).toBeGreaterThan(0);
    expect(documented.sort()).toEqual(outputs.sort());
  });

  it('builds the messaging and the email API', () => {
    expect([...apiNames].sort()).toEqual(['email', 'messaging']);
    for (const api of apiNames) {
      expect(apiOf(api).routeFunctions.size).toBe(routes.filter((r) => r.api === api).length);
    }
  });

  it("maps every route to a method on its own API, authorized by that API's authorizer, integrated with its own function", () => {
    const all = methods();
    const authorizerOf = new Map(
      Object.entries(resources('AWS::ApiGateway::Authorizer')).map(([id, a]) => [a.Properties.RestApiId.Ref, id]),
    );
    for (const route of routes) {
      const built = apiOf(route.api);
      const onPath = all.filter((m) => m.path === route.path && m.httpMethod === route.method);
      // On its own API only (the email routes are not on the messaging API and vice versa).
      expect(
        onPath.map((m) => m.api),
        `${route.method} ${route.path}`,
      ).toEqual([logicalId(built.api)]);
      const [m] = onPath;
      expect(m!.authorizationType).toBe('CUSTOM');
      expect(m!.authorizerId).toBe(authorizerOf.get(logicalId(built.api)));
      expect(m!.integration.Type).toBe('AWS_PROXY');
      expect(JSON.stringify(m!.integration.Uri)).toContain(logicalId(built.routeFunctions.get(route)!));
    }
    // No other authorized methods: every non-ANY method is a row of the table.
    expect(all.filter((m) => m.httpMethod !== 'ANY')).toHaveLength(routes.length);
  });

  it('names in each route function the credential its route takes, and builds the platform routes', () => {
    const description = (fn: IFunction) => resources('AWS::Lambda::Function')[logicalId(fn)]!.Properties.Description;
    const named = { user: '(user token)', secret: '(secret key)', any: '(user token or secret key)' };
    for (const route of routes) {
      const fn = apiOf(route.api).routeFunctions.get(route)!;
      expect(description(fn)).toBe(`${route.method} ${route.path} ${named[route.credential]}`);
    }
    // The platform endpoints, each with the secret key (a user may read a contact)
    const platform = routes.filter((r) => /^\/v1\/(contacts|groups|webhook_endpoints|account)/.test(r.path));
    expect(platform.map((r) => `${r.method} ${r.path}`)).toEqual(
      expect.arrayContaining([
        'POST /v1/contacts',
        'DELETE /v1/contacts/{id}/tokens/{token_id}',
        'DELETE /v1/groups/{id}/members/{contact_id}',
        'POST /v1/webhook_endpoints/{id}/rotate_secret',
        'GET /v1/account',
      ]),
    );
    expect(platform.filter((r) => r.credential !== 'secret').map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v1/contacts/{id}']);
    expect(routes.find((r) => r.path === '/api/v1/account')!.credential).toBe('any');
  });

  it("gives the account endpoints the deployment's default rate limit to show", () => {
    for (const route of routes.filter((r) => r.showsLimits)) {
      expect(envOf(apiOf(route.api).routeFunctions.get(route)!)).toMatchObject({
        ACCOUNT_RATE_LIMIT: expect.any(String),
        ACCOUNT_BURST_LIMIT: expect.any(String),
      });
    }
    expect(routes.filter((r) => r.showsLimits)).toHaveLength(2);
  });

  it("nests resources by path segment, including path parameters under path parameters' parents", () => {
    const paths = [...resourcePaths().values()];
    for (const route of routes) {
      const segments = route.path.split('/').filter(Boolean);
      for (let i = 1; i <= segments.length; i++) expect(paths).toContain(`/${segments.slice(0, i).join('/')}`);
    }
  });

  it('sends other methods and unknown paths to the unauthenticated fallback', () => {
    const all = methods();
    for (const api of apiNames) {
      const built = apiOf(api);
      const anyMethods = all.filter((m) => m.api === logicalId(built.api) && m.httpMethod === 'ANY');
      const anyPaths = anyMethods.map((m) => m.path);
      const routePaths = routes.filter((r) => r.api === api).map((r) => r.path);
      // Every intermediate resource too (e.g. /api and /api/v1), or API Gateway answers 403 there.
      const prefixes = routePaths.flatMap((p) => {
        const segments = p.split('/').filter(Boolean);
        return segments.map((_, i) => `/${segments.slice(0, i + 1).join('/')}`);
      });
      expect(anyPaths).toEqual(expect.arrayContaining(['/', '/{proxy+}', ...routePaths, ...prefixes]));
      expect(new Set(anyPaths).size).toBe(anyPaths.length);
      for (const m of anyMethods) {
        expect(m.authorizationType).toBe('NONE');
        expect(JSON.stringify(m.integration.Uri)).toContain(logicalId(built.fallbackFunction));
      }
      // Only ANY methods are unauthenticated.
      for (const m of all.filter((m) => m.api === logicalId(built.api) && m.httpMethod !== 'ANY')) {
        expect(m.authorizationType).toBe('CUSTOM');
      }
    }
  });

  it('uses a token authorizer on the Authorization header, its answers cached 60 s, malformed headers refused before it runs', () => {
    template.resourceCountIs('AWS::ApiGateway::Authorizer', apiNames.length);
    template.allResourcesProperties('AWS::ApiGateway::Authorizer', {
      Type: 'TOKEN',
      IdentitySource: 'method.request.header.Authorization',
      AuthorizerResultTtlInSeconds: 60,
      IdentityValidationExpression: AUTHORIZATION_PATTERN.source,
    });
    // The expression as API Gateway receives it: an issued token passes, anything else does not.
    const expression = new RegExp(Object.values(resources('AWS::ApiGateway::Authorizer'))[0]!.Properties.IdentityValidationExpression);
    expect(expression.test(`Bearer ${generateToken()}`)).toBe(true);
    expect(expression.test(`Bearer ${generateSecretKey()}`)).toBe(true);
    for (const bad of [
      `Bearer ${generateSecretKey()}x`,
      'Bearer sk_short',
      '',
      'Bearer',
      `Basic ${generateToken()}`,
      'Bearer tok_short',
      `Bearer ${generateToken()}x`,
      `Bearer ${generateToken()} extra`,
    ]) {
      expect(expression.test(bad), bad).toBe(false);
    }
    for (const api of apiNames) {
      const built = apiOf(api);
      const own = Object.values(resources('AWS::ApiGateway::Authorizer')).filter(
        (a) => a.Properties.RestApiId.Ref === logicalId(built.api),
      );
      expect(own).toHaveLength(1);
      expect(JSON.stringify(own[0]!.Properties.AuthorizerUri)).toContain(logicalId(built.authorizerFunction!));
    }
  });
});

describe('per-account rate limits (usage plans)', () => {
  const plans = () => resources('AWS::ApiGateway::UsagePlan');

  it('takes the API key from the authorizer on both APIs, and requires one on every route method only', () => {
    for (const api of apiNames)
      expect(resources('AWS::ApiGateway::RestApi')[logicalId(apiOf(api).api)]!.Properties.ApiKeySourceType).toBe('AUTHORIZER');
    for (const m of methods()) {
      const isRoute = m.authorizationType === 'CUSTOM';
      // The fallback and the preflight need no key: they answer without the authorizer, reading nothing.
      expect(m.httpMethod !== 'ANY' && m.httpMethod !== 'OPTIONS', `${m.httpMethod} ${m.path}`).toBe(isRoute);
    }
    const required = Object.values(resources('AWS::ApiGateway::Method')).filter((m) => m.Properties.ApiKeyRequired === true);
    expect(required.map((m) => m.Properties.AuthorizationType)).toEqual(routes.map(() => 'CUSTOM'));
  });

  it('puts both APIs in one default plan at 50 requests/s with bursts of 100 per key, across both stages', () => {
    const all = Object.values(plans());
    expect(all).toHaveLength(1);
    const plan = all[0]!.Properties;
    expect(plan.Throttle).toEqual({ RateLimit: 50, BurstLimit: 100 });
    expect(plan.UsagePlanName).toBe('test-stack-accounts-default');
    expect(plan.ApiStages.map((s: Cfn) => s.ApiId.Ref).sort()).toEqual(apiNames.map((a) => logicalId(apiOf(a).api)).sort());
    for (const s of plan.ApiStages) expect(s.Stage).toEqual({ Ref: expect.stringMatching(/DeploymentStageprod/) });
    // Keys are runtime data (one per account, made by the admin command line), never part of the template.
    template.resourceCountIs('AWS::ApiGateway::ApiKey', 0);
    template.hasOutput('DefaultAccountUsagePlanId', { Value: { Ref: Object.keys(plans())[0] } });
  });

  it('takes the default per-account limit from the deploy settings', () => {
    const { template: custom } = synthStack({ accountRateLimit: '5', accountBurstLimit: '7' }, 'AccountLimits');
    const [plan] = Object.values(custom.findResources('AWS::ApiGateway::UsagePlan')) as { Properties: Cfn }[];
    expect(plan!.Properties.Throttle).toEqual({ RateLimit: 5, BurstLimit: 7 });
    expect(() => synthStack({ accountBurstLimit: '1.5' }, 'BadBurst')).toThrow(/accountBurstLimit/);
    expect(() => synthStack({ accountRateLimit: '-1' }, 'BadRate')).toThrow(/accountRateLimit/);
  });
});

describe('gateway responses', () => {
  const byType = () => {
    const out: Record<string, Cfn> = {};
    for (const { Properties: p } of Object.values(resources('AWS::ApiGateway::GatewayResponse'))) out[p.ResponseType] = p;
    return out;
  };
  const body = (p: Cfn) => JSON.parse(p.ResponseTemplates['application/json']);

  it('answers authorizer failures with 401, WWW-Authenticate and the error envelope', () => {
    const responses = byType();
    for (const type of ['UNAUTHORIZED', 'ACCESS_DENIED']) {
      const p = responses[type];
      expect(p, type).toBeDefined();
      expect(p.StatusCode).toBe('401');
      expect(p.ResponseParameters['gatewayresponse.header.WWW-Authenticate']).toBe("'Bearer'");
      expect(body(p)).toEqual({ error: { type: 'authentication_error', code: 'unauthorized', message: expect.any(String) } });
    }
  });

  it('covers size limits, throttling and the 4xx/5xx defaults with JSON and a request id', () => {
    const responses = byType();
    const expected: Record<string, { status?: string; type: string; code?: string }> = {
      REQUEST_TOO_LARGE: { status: '413', type: 'invalid_request_error', code: 'body_too_large' },
      THROTTLED: { status: '429', type: 'rate_limit_error', code: 'rate_limited' },
      DEFAULT_4XX: { type: 'invalid_request_error' },
      DEFAULT_5XX: { type: 'api_error', code: 'internal_error' },
    };
    for (const [type, want] of Object.entries(expected)) {
      const p = responses[type];
      expect(p, type).toBeDefined();
      if (want.status) expect(p.StatusCode).toBe(want.status);
      expect(body(p).error.type).toBe(want.type);
      if (want.code) expect(body(p).error.code).toBe(want.code);
    }
    // A usage plan's (or the stage's) throttle: the client is told when to try again.
    expect(responses.THROTTLED.ResponseParameters['gatewayresponse.header.Retry-After']).toBe("'1'");
    for (const p of Object.values(responses)) {
      // Never API Gateway's own error text in a body
      expect(p.ResponseTemplates['application/json']).not.toContain('$context');
      expect(p.ResponseParameters['gatewayresponse.header.Content-Type']).toBe("'application/json'");
      expect(p.ResponseParameters['gatewayresponse.header.X-Request-Id']).toBe('context.requestId');
    }
  });
});

describe('workers', () => {
  const sourceOf = (worker: (typeof workers)[number]) => (worker.deadLetters ? stack.deadLetterQueues : stack.queues)[worker.queue];

  it('consumes each worker queue (or its dead-letter queue) with partial batch failures', () => {
    template.resourceCountIs('AWS::Lambda::EventSourceMapping', workers.length + streams.length);
    expect(stack.workerFunctions.size).toBe(workers.length);
    const mappings = Object.values(resources('AWS::Lambda::EventSourceMapping'));
    for (const [worker, fn] of stack.workerFunctions) {
      const own = mappings.filter((m) => m.Properties.FunctionName.Ref === logicalId(fn));
      expect(own, worker.name).toHaveLength(1);
      expect(own[0]!.Properties).toEqual(
        expect.objectContaining({
          EventSourceArn: getAtt(logicalId(sourceOf(worker))),
          BatchSize: worker.batchSize,
          FunctionResponseTypes: ['ReportBatchItemFailures'],
        }),
      );
    }
  });

  it('points the dead-letter worker at the dead-letter queue, not the queue', () => {
    const dlqWorkers = workers.filter((w) => w.deadLetters);
    expect(dlqWorkers.map((w) => w.name)).toContain('validation-dead-letters');
    const mappings = Object.values(resources('AWS::Lambda::EventSourceMapping'));
    for (const worker of dlqWorkers) {
      const fn = stack.workerFunctions.get(worker)!;
      const arn = mappings.find((m) => m.Properties.FunctionName.Ref === logicalId(fn))!.Properties.EventSourceArn;
      expect(arn).toEqual(getAtt(logicalId(stack.deadLetterQueues[worker.queue])));
      expect(arn).not.toEqual(getAtt(logicalId(stack.queues[worker.queue])));
      expect(resources('AWS::SQS::Queue')[arn['Fn::GetAtt'][0]]!.Properties.QueueName).toBe(`test-stack-${queues[worker.queue].name}-dlq`);
    }
  });

  it('keeps each consumed queue visibility timeout >= 6 x its worker timeout (queues and dead-letter queues)', () => {
    const functions = resources('AWS::Lambda::Function');
    const sqsQueues = resources('AWS::SQS::Queue');
    for (const [worker, fn] of stack.workerFunctions) {
      const timeout = functions[logicalId(fn)]!.Properties.Timeout;
      expect(timeout).toBe(worker.timeoutSeconds);
      expect(sqsQueues[logicalId(sourceOf(worker))]!.Properties.VisibilityTimeout, worker.name).toBeGreaterThanOrEqual(6 * timeout);
    }
  });

  it('refuses to synthesize when a queue definition is too short for its worker', async () => {
    vi.resetModules();
    vi.doMock('../../shared/queues.ts', async (importOriginal) => {
      const real = await importOriginal<typeof import('../../shared/queues.ts')>();
      const shortened = Object.fromEntries(Object.entries(real.queues).map(([k, q]) => [k, { ...q, visibilityTimeoutSeconds: 1 }]));
      return { ...real, queues: shortened };
    });
    try {
      const { MessagingAndEmailValidationStack: Mocked } = await import('../../infra/stack.ts');
      expect(() => new Mocked(testApp(), 'Bad')).toThrow(/>= 6 x/);
    } finally {
      vi.doUnmock('../../shared/queues.ts');
      vi.resetModules();
    }
  });

  it('checks visibility timeout >= 6 x worker timeout', () => {
    const queue = { name: 'q', visibilityTimeoutSeconds: 59, maxReceiveCount: 3 };
    expect(() => assertWorkerFitsQueue({ name: 'w', timeoutSeconds: 10 }, queue)).toThrow(/>= 6 x/);
    expect(() => assertWorkerFitsQueue({ name: 'w', timeoutSeconds: 10 }, { ...queue, visibilityTimeoutSeconds: 60 })).not.toThrow();
  });
});

describe('schedules', () => {
  const rate = (minutes: number) => `rate(${minutes} minute${minutes === 1 ? '' : 's'})`;

  it('creates one EventBridge rule per schedule, targeting its function at its rate', () => {
    template.resourceCountIs('AWS::Events::Rule', schedules.length);
    expect(stack.scheduleFunctions.size).toBe(schedules.length);
    const rules = resources('AWS::Events::Rule');
    for (const [schedule, fn] of stack.scheduleFunctions) {
      const rule = rules[logicalId(stack.scheduleRules.get(schedule)!)]!.Properties;
      expect(rule.ScheduleExpression).toBe(rate(schedule.everyMinutes));
      expect(rule.State).toBe('ENABLED');
      expect(rule.Targets).toHaveLength(1);
      expect(rule.Targets[0].Arn).toEqual(getAtt(logicalId(fn)));
    }
  });

  it('runs the sweeper every minute', () => {
    const sweeper = schedules.find((s) => s.name === 'sweeper')!;
    expect(sweeper).toBeDefined();
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 minute)',
      Targets: [Match.objectLike({ Arn: getAtt(logicalId(stack.scheduleFunctions.get(sweeper)!)) })],
    });
  });

  it('lets EventBridge invoke each scheduled function, from its own rule only', () => {
    const fromEvents = Object.values(resources('AWS::Lambda::Permission')).filter((p) => p.Properties.Principal === 'events.amazonaws.com');
    expect(fromEvents).toHaveLength(schedules.length);
    for (const [schedule, fn] of stack.scheduleFunctions) {
      template.hasResourceProperties('AWS::Lambda::Permission', {
        Action: 'lambda:InvokeFunction',
        Principal: 'events.amazonaws.com',
        FunctionName: getAtt(logicalId(fn)),
        SourceArn: getAtt(logicalId(stack.scheduleRules.get(schedule)!)),
      });
    }
  });

  it('sends a failed run to the failed-invocations queue at once: the next run, a period later, does the same work', () => {
    const configs = Object.values(resources('AWS::Lambda::EventInvokeConfig')).map(({ Properties: p }) => p);
    expect(configs).toHaveLength(schedules.length);
    for (const [schedule, fn] of stack.scheduleFunctions) {
      expect(configs.find((c) => c.FunctionName.Ref === logicalId(fn))).toEqual({
        FunctionName: { Ref: logicalId(fn) },
        Qualifier: '$LATEST',
        MaximumRetryAttempts: 0,
        MaximumEventAgeInSeconds: 60 * schedule.everyMinutes,
        DestinationConfig: { OnFailure: { Destination: getAtt(logicalId(stack.failedInvocationsQueue)) } },
      });
    }
  });
});

describe('the change stream', () => {
  it('streams both images of every change of the table', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', { StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' } });
  });

  it('feeds each consumer with partial batch failures, bisect on error, a dead-letter queue and a filter on the event items', () => {
    expect(stack.streamFunctions.size).toBe(streams.length);
    const mappings = Object.values(resources('AWS::Lambda::EventSourceMapping'));
    for (const [consumer, fn] of stack.streamFunctions) {
      const own = mappings.filter((m) => m.Properties.FunctionName.Ref === logicalId(fn));
      expect(own, consumer.name).toHaveLength(1);
      const p = own[0]!.Properties;
      expect(p).toEqual(
        expect.objectContaining({
          EventSourceArn: { 'Fn::GetAtt': [logicalId(stack.table), 'StreamArn'] },
          BatchSize: consumer.batchSize,
          FunctionResponseTypes: ['ReportBatchItemFailures'],
          BisectBatchOnFunctionError: true,
          MaximumRetryAttempts: consumer.retryAttempts,
          StartingPosition: 'TRIM_HORIZON',
          DestinationConfig: { OnFailure: { Destination: getAtt(logicalId(stack.failedInvocationsQueue)) } },
        }),
      );
      const pattern = JSON.parse(p.FilterCriteria.Filters[0].Pattern);
      expect(pattern.dynamodb.Keys.sk.S).toEqual([...consumer.sortKeys.exact, ...consumer.sortKeys.prefix.map((prefix) => ({ prefix }))]);
      // The consumers of event items take their inserts only: a TTL removal of each would otherwise invoke them too
      expect(pattern.eventName).toEqual(consumer.insertsOnly ? ['INSERT'] : undefined);
    }
  });

  it('queues webhook deliveries, and only their worker may decrypt endpoint secrets', () => {
    const worker = [...stack.workerFunctions].find(([w]) => w.name === 'deliver-webhooks')![1];
    const env = (
      resources('AWS::Lambda::Function')[logicalId(worker)] as { Properties: { Environment: { Variables: Record<string, unknown> } } }
    ).Properties.Environment.Variables;
    expect(env.WEBHOOK_KMS_KEY_ID).toEqual(getAtt(logicalId(stack.webhookKey)));
    template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
    // The endpoints' secrets (the `webhook` context): the worker alone, and nothing more; the sealing routes only their replays' (the next test)
    type Statement = { Action: string | string[]; Condition?: Record<string, Record<string, unknown>> };
    const statements = Object.values(resources('AWS::IAM::Policy')).flatMap((p) =>
      (p.Properties.PolicyDocument.Statement as Statement[]).map((s) => ({ s, roles: JSON.stringify(p.Properties.Roles) })),
    );
    const decrypts = statements.filter(({ s }) => [s.Action].flat().includes('kms:Decrypt'));
    expect(decrypts.filter(({ s }) => s.Condition === undefined)).toEqual([]);
    const webhook = decrypts.filter(({ s }) => JSON.stringify(s.Condition).includes('"webhook"'));
    expect(webhook).toHaveLength(1);
    expect(webhook[0]!.roles).toContain(logicalId(worker.role!));
    expect(webhook[0]!.s.Condition).toEqual({
      'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': ['webhook'] },
      Null: { 'kms:EncryptionContextKeys': 'false' },
    });
  });

  it('lets only the routes that make a secret seal it (kms:Encrypt), with the key named, and open only what they sealed for a replay', () => {
    const sealing = routes.filter((r) => r.seals).map((r) => `${r.method} ${r.path}`);
    expect(sealing).toEqual([
      'POST /v1/contacts/{id}/tokens',
      'POST /v1/webhook_endpoints',
      'POST /v1/webhook_endpoints/{id}/rotate_secret',
    ]);
    const encrypting = Object.values(resources('AWS::IAM::Policy')).filter((p) =>
      (p.Properties.PolicyDocument.Statement as { Action: string | string[] }[]).some((s) => [s.Action].flat().includes('kms:Encrypt')),
    );
    // One role: the two routes share their grant profile
    expect(encrypting).toHaveLength(1);
    for (const route of routes.filter((r) => r.seals)) {
      const fn = stack.apis.get(route.api)!.routeFunctions.get(route)!;
      expect(envOf(fn).WEBHOOK_KMS_KEY_ID).toEqual(getAtt(logicalId(stack.webhookKey)));
      expect(JSON.stringify(encrypting[0]!.Properties.Roles)).toContain(logicalId(fn.role!));
    }
    // Their Decrypt is bound to the replay context alone: a webhook's secret (sealed under `webhook`) stays closed to them
    const statements = encrypting[0]!.Properties.PolicyDocument.Statement as { Action: string | string[]; Condition?: unknown }[];
    const decrypt = statements.filter((s) => [s.Action].flat().includes('kms:Decrypt'));
    expect(decrypt).toHaveLength(1);
    expect(decrypt[0]!.Condition).toEqual({
      'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': ['replay'] },
      Null: { 'kms:EncryptionContextKeys': 'false' },
    });
  });
});

describe('the realtime WebSocket API', () => {
  const built = stack.realtime!;
  const apiId = logicalId(built.api);
  const fnOf = (route: string) => [...built.routeFunctions].find(([r]) => r.route === route)![1];
  const routeRows = () => Object.values(resources('AWS::ApiGatewayV2::Route')).map(({ Properties: p }) => p);
  const integrationTarget = (ref: string) => resources('AWS::ApiGatewayV2::Integration')[ref]!.Properties.IntegrationUri;

  it('is one WebSocket API with a prod stage, its URL a stack output', () => {
    template.resourceCountIs('AWS::ApiGatewayV2::Api', 1);
    template.hasResourceProperties('AWS::ApiGatewayV2::Api', {
      ProtocolType: 'WEBSOCKET',
      RouteSelectionExpression: '$request.body.action',
    });
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', { ApiId: { Ref: apiId }, StageName: 'prod', AutoDeploy: true });
    const output = template.findOutputs('RealtimeUrl');
    expect(JSON.stringify(Object.values(output)[0]!.Value)).toContain('wss://');
  });

  it('routes $connect, $disconnect and $default each to its own function, the authorizer on $connect only', () => {
    const rows = routeRows();
    expect(rows.map((r) => r.RouteKey).sort()).toEqual(realtime.routes.map((r) => r.route).sort());
    for (const route of realtime.routes) {
      const row = rows.find((r) => r.RouteKey === route.route)!;
      const target = JSON.stringify(integrationTarget(row.Target['Fn::Join'][1][1].Ref));
      expect(target).toContain(logicalId(fnOf(route.route)));
      if (route.route === '$connect') expect(row).toMatchObject({ AuthorizationType: 'CUSTOM', AuthorizerId: { Ref: expect.any(String) } });
      else expect(row.AuthorizationType ?? 'NONE').toBe('NONE');
    }
    const authorizers = Object.values(resources('AWS::ApiGatewayV2::Authorizer')).map(({ Properties: p }) => p);
    expect(authorizers).toHaveLength(1);
    // Either token form must reach the authorizer: the identity source is a header every handshake has, not the token's.
    expect(authorizers[0]).toMatchObject({
      AuthorizerType: 'REQUEST',
      ApiId: { Ref: apiId },
      IdentitySource: ['route.request.header.Sec-WebSocket-Key'],
    });
    expect(JSON.stringify(authorizers[0].AuthorizerUri)).toContain(logicalId(built.authorizerFunction));
  });

  it('lets API Gateway invoke the route functions and the authorizer, scoped to this API', () => {
    const permissions = Object.values(resources('AWS::Lambda::Permission')).map(({ Properties: p }) => p);
    for (const fn of [built.authorizerFunction, ...built.routeFunctions.values()]) {
      const own = permissions.filter((p) => p.FunctionName['Fn::GetAtt']?.[0] === logicalId(fn));
      expect(own.length, fn.node.id).toBeGreaterThan(0);
      for (const p of own) {
        expect(p.Principal).toBe('apigateway.amazonaws.com');
        expect(JSON.stringify(p.SourceArn)).toContain(apiId);
      }
    }
  });

  it('lets only the $default route and the realtime stream consumer post to connections, on this API alone', () => {
    const consumer = [...stack.streamFunctions].find(([c]) => c.realtime)![1];
    const posters = allFunctions().filter(({ fn }) => policyActions(fn).includes('execute-api:ManageConnections'));
    expect(posters.map(({ fn }) => logicalId(fn)).sort()).toEqual([logicalId(fnOf('$default')), logicalId(consumer)].sort());
    const statements = Object.values(resources('AWS::IAM::Policy'))
      .flatMap(({ Properties: p }) => p.PolicyDocument.Statement)
      .filter((s: Cfn) => s.Action === 'execute-api:ManageConnections');
    for (const s of statements) expect(JSON.stringify(s.Resource)).toContain(apiId);
    expect(JSON.stringify(envOf(consumer).REALTIME_ENDPOINT)).toContain(apiId);
  });

  it("spreads the realtime consumer over concurrent batches per shard and filters it to users' events and connections", () => {
    const [consumer, fn] = [...stack.streamFunctions].find(([c]) => c.realtime)!;
    const mapping = Object.values(resources('AWS::Lambda::EventSourceMapping')).find(
      (m) => m.Properties.FunctionName.Ref === logicalId(fn),
    )!;
    expect(mapping.Properties.ParallelizationFactor).toBe(consumer.parallelization);
    expect(consumer.sortKeys).toEqual({ exact: [], prefix: ['EVT#', 'CONN#'] });
    expect(JSON.parse(mapping.Properties.FilterCriteria.Filters[0].Pattern)).toEqual({
      eventName: ['INSERT'],
      dynamodb: { Keys: { sk: { S: [{ prefix: 'EVT#' }, { prefix: 'CONN#' }] } } },
    });
  });

  it("runs the events feeds' writer one batch per shard, on the items whose changes are events, and webhooks on the account's appends", () => {
    const mappingOf = (name: string) => {
      const fn = [...stack.streamFunctions].find(([c]) => c.name === name)![1];
      return Object.values(resources('AWS::Lambda::EventSourceMapping')).find((m) => m.Properties.FunctionName.Ref === logicalId(fn))!;
    };
    const feed = mappingOf('event-feed');
    expect(feed.Properties.ParallelizationFactor ?? 1).toBe(1);
    expect(JSON.parse(feed.Properties.FilterCriteria.Filters[0].Pattern)).toEqual({
      dynamodb: { Keys: { sk: { S: ['CONV', 'LIST', { prefix: 'MSG#' }, { prefix: '#MSG#' }] } } },
    });
    expect(JSON.parse(mappingOf('webhook-events').Properties.FilterCriteria.Filters[0].Pattern)).toEqual({
      eventName: ['INSERT'],
      dynamodb: { Keys: { sk: { S: [{ prefix: 'AEVT#' }] } } },
    });
  });
});
