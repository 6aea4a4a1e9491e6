import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { App, type CfnElement } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { tableDefinition } from '../../shared/db/table-definition.ts';
import { queues, queueUrlEnv, type QueueDefinition } from '../../shared/queues.ts';
import { authorizer, fallback, routes, workers, type ApiName, type QueueName } from '../../shared/routes.ts';
import { assertWorkerFitsQueue, ServerlessMessagingStack } from '../../infra/stack.ts';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const handlers = [...routes.map((r) => r.handler), authorizer.handler, fallback.handler, ...workers.map((w) => w.handler)];

// Bundling is skipped, but NodejsFunction still requires each entry to exist
// under the project root: use the real functions/ when complete, stubs in an
// untracked temporary directory inside the repo otherwise.
let stubDir: string | undefined;
function functionsDir(): string {
  const real = path.join(repoRoot, 'functions');
  if (handlers.every((h) => fs.existsSync(path.join(real, `${h}.ts`)))) return real;
  const cache = path.join(repoRoot, 'node_modules', '.cache');
  fs.mkdirSync(cache, { recursive: true });
  stubDir = fs.mkdtempSync(path.join(cache, 'infra-test-functions-'));
  for (const h of handlers) {
    fs.mkdirSync(path.dirname(path.join(stubDir, h)), { recursive: true });
    fs.writeFileSync(path.join(stubDir, `${h}.ts`), 'export const handler = async () => ({});\n');
  }
  return stubDir;
}
afterAll(() => {
  if (stubDir) fs.rmSync(stubDir, { recursive: true, force: true });
});

// Same feature flags as `cdk synth`, so the template under test is the deployed one.
const cdkContext = JSON.parse(fs.readFileSync(path.join(repoRoot, 'cdk.json'), 'utf8')).context ?? {};
const app = new App({ context: { ...cdkContext, 'aws:cdk:bundling-stacks': [] } });
const stack = new ServerlessMessagingStack(app, 'TestStack', { stackName: 'test-stack', functionsDir: functionsDir() });
const template = Template.fromStack(stack);

const logicalId = (c: { node: { defaultChild?: unknown } }) => stack.getLogicalId(c.node.defaultChild as CfnElement);
const apiNames = [...new Set(routes.map((r) => r.api))];
const apiOf = (name: ApiName) => stack.apis.get(name)!;
const resources = (type: string) => template.findResources(type) as Record<string, { Properties: any }>;

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
  integration: any;
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
    .filter(({ Properties: p }) => p.Roles.some((r: any) => r.Ref === role))
    .flatMap(({ Properties: p }) => p.PolicyDocument.Statement)
    .flatMap((s: any) => (Array.isArray(s.Action) ? s.Action : [s.Action]));
}

function envOf(fn: IFunction): Record<string, unknown> {
  return resources('AWS::Lambda::Function')[logicalId(fn)]!.Properties.Environment?.Variables ?? {};
}

/** Every function the stack built, with the route-table row it came from. */
function allFunctions() {
  const rows: { fn: IFunction; table?: string; sends?: readonly QueueName[] }[] = [];
  for (const built of stack.apis.values()) {
    rows.push({ fn: built.authorizerFunction, table: authorizer.table });
    rows.push({ fn: built.fallbackFunction });
    for (const [route, fn] of built.routeFunctions) rows.push({ fn, table: route.table, sends: route.sends });
  }
  for (const [worker, fn] of stack.workerFunctions) rows.push({ fn, table: worker.table, sends: worker.sends });
  return rows;
}

describe('DynamoDB table', () => {
  it('matches tableDefinition, pay-per-request, PITR, retained', () => {
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
      },
    });
  });
});

describe('SQS queues', () => {
  const defs = Object.entries(queues) as [QueueName, QueueDefinition][];

  it('creates a queue and a dead-letter queue per definition', () => {
    template.resourceCountIs('AWS::SQS::Queue', defs.length * 2);
    for (const [key, def] of defs) {
      const queue = stack.queues[key];
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
      });
      template.hasOutput(`${key[0]!.toUpperCase()}${key.slice(1)}QueueUrl`, { Value: { Ref: logicalId(queue) } });
    }
  });
});

describe('Lambda functions', () => {
  it('creates exactly one function per route, authorizer and fallback per API, and worker', () => {
    const expected = routes.length + apiNames.length * 2 + workers.length;
    template.resourceCountIs('AWS::Lambda::Function', expected);
    expect(allFunctions()).toHaveLength(expected);
  });

  it('runs every function on Node 22, arm64, with source maps and the table name', () => {
    for (const { Properties: p } of Object.values(resources('AWS::Lambda::Function'))) {
      expect(p.Runtime).toBe('nodejs22.x');
      expect(p.Architectures).toEqual(['arm64']);
      expect(p.MemorySize).toBe(256);
      expect(p.Environment.Variables.NODE_OPTIONS).toBe('--enable-source-maps');
      expect(p.Environment.Variables.TABLE_NAME).toEqual({ Ref: logicalId(stack.table) });
      expect(p.LoggingConfig?.LogGroup).toBeDefined();
    }
  });

  it('uses the timeout from the route table (default 10 s)', () => {
    for (const built of stack.apis.values()) {
      for (const [route, fn] of built.routeFunctions) {
        expect(resources('AWS::Lambda::Function')[logicalId(fn)]!.Properties.Timeout).toBe(route.timeoutSeconds ?? 10);
      }
    }
  });
});

describe('least privilege', () => {
  const writeActions = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'];

  it('grants table reads, and writes only to readWrite rows; none to the fallback', () => {
    for (const { fn, table } of allFunctions()) {
      const actions = policyActions(fn);
      if (table === undefined) {
        expect(actions.filter((a) => a.startsWith('dynamodb:'))).toEqual([]);
        continue;
      }
      expect(actions).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query']));
      if (table === 'read') for (const a of writeActions) expect(actions).not.toContain(a);
      else expect(actions).toEqual(expect.arrayContaining(writeActions));
    }
  });

  it('lets only functions whose row sends to a queue send, and gives them its URL', () => {
    for (const { fn, sends = [] } of allFunctions()) {
      expect(policyActions(fn).includes('sqs:SendMessage')).toBe(sends.length > 0);
      const env = envOf(fn);
      for (const q of Object.keys(queues) as QueueName[]) {
        if (sends.includes(q)) expect(env[queueUrlEnv(q)]).toEqual({ Ref: logicalId(stack.queues[q]) });
        else expect(env).not.toHaveProperty(queueUrlEnv(q));
      }
    }
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
      const output = template.findOutputs(`${api[0]!.toUpperCase()}${api.slice(1)}ApiUrl`);
      expect(Object.keys(output)).toHaveLength(1);
      // Base URL: the /v1/... route paths are appended, so no trailing slash.
      expect(JSON.stringify(Object.values(output)[0])).toMatch(/\/prod"\]\]\}\}$/);
    }
    template.hasOutput('TableName', { Value: { Ref: logicalId(stack.table) } });
  });

  it('maps every route to a CUSTOM-authorized method on its path, integrated with its own function', () => {
    const all = methods();
    for (const route of routes) {
      const built = apiOf(route.api);
      const matches = all.filter(
        (m) => m.api === logicalId(built.api) && m.path === route.path && m.httpMethod === route.method,
      );
      expect(matches, `${route.method} ${route.path}`).toHaveLength(1);
      const [m] = matches;
      expect(m!.authorizationType).toBe('CUSTOM');
      expect(m!.authorizerId).toBeDefined();
      expect(m!.integration.Type).toBe('AWS_PROXY');
      expect(JSON.stringify(m!.integration.Uri)).toContain(logicalId(built.routeFunctions.get(route)!));
    }
  });

  it('sends other methods and unknown paths to the unauthenticated fallback', () => {
    const all = methods();
    for (const api of apiNames) {
      const built = apiOf(api);
      const anyMethods = all.filter((m) => m.api === logicalId(built.api) && m.httpMethod === 'ANY');
      const anyPaths = anyMethods.map((m) => m.path);
      const routePaths = routes.filter((r) => r.api === api).map((r) => r.path);
      expect(anyPaths).toEqual(expect.arrayContaining(['/', '/{proxy+}', ...routePaths]));
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

  it('uses a token authorizer on the Authorization header without result caching', () => {
    template.resourceCountIs('AWS::ApiGateway::Authorizer', apiNames.length);
    template.allResourcesProperties('AWS::ApiGateway::Authorizer', {
      Type: 'TOKEN',
      IdentitySource: 'method.request.header.Authorization',
      AuthorizerResultTtlInSeconds: 0,
    });
    for (const api of apiNames) {
      const built = apiOf(api);
      const own = Object.values(resources('AWS::ApiGateway::Authorizer')).filter(
        (a) => a.Properties.RestApiId.Ref === logicalId(built.api),
      );
      expect(own).toHaveLength(1);
      expect(JSON.stringify(own[0]!.Properties.AuthorizerUri)).toContain(logicalId(built.authorizerFunction));
    }
  });
});

describe('gateway responses', () => {
  const byType = () => {
    const out: Record<string, any> = {};
    for (const { Properties: p } of Object.values(resources('AWS::ApiGateway::GatewayResponse'))) out[p.ResponseType] = p;
    return out;
  };
  const body = (p: any) =>
    JSON.parse(p.ResponseTemplates['application/json'].replaceAll('$context.error.messageString', '"x"'));

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
      THROTTLED: { status: '429', type: 'rate_limit_error' },
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
    for (const p of Object.values(responses)) {
      expect(p.ResponseParameters['gatewayresponse.header.Content-Type']).toBe("'application/json'");
      expect(p.ResponseParameters['gatewayresponse.header.X-Request-Id']).toBe('context.requestId');
    }
  });
});

describe('workers', () => {
  it('consumes each worker queue with partial batch failures', () => {
    template.resourceCountIs('AWS::Lambda::EventSourceMapping', workers.length);
    for (const [worker, fn] of stack.workerFunctions) {
      template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        FunctionName: { Ref: logicalId(fn) },
        EventSourceArn: { 'Fn::GetAtt': [logicalId(stack.queues[worker.queue]), 'Arn'] },
        BatchSize: worker.batchSize,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      });
    }
  });

  it('keeps each queue visibility timeout >= 6 x its worker timeout', () => {
    const functions = resources('AWS::Lambda::Function');
    const sqsQueues = resources('AWS::SQS::Queue');
    for (const [worker, fn] of stack.workerFunctions) {
      const timeout = functions[logicalId(fn)]!.Properties.Timeout;
      expect(timeout).toBe(worker.timeoutSeconds);
      expect(sqsQueues[logicalId(stack.queues[worker.queue])]!.Properties.VisibilityTimeout).toBeGreaterThanOrEqual(
        6 * timeout,
      );
    }
  });

  it('refuses to synthesize when a queue definition is too short for its worker', async () => {
    vi.resetModules();
    vi.doMock('../../shared/queues.ts', async (importOriginal) => {
      const real = await importOriginal<typeof import('../../shared/queues.ts')>();
      const shortened = Object.fromEntries(
        Object.entries(real.queues).map(([k, q]) => [k, { ...q, visibilityTimeoutSeconds: 1 }]),
      );
      return { ...real, queues: shortened };
    });
    try {
      const { ServerlessMessagingStack: Mocked } = await import('../../infra/stack.ts');
      expect(() => new Mocked(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Bad')).toThrow(/>= 6 x/);
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
