import fs from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { afterAll, describe, expect, it } from 'vitest';
import { METRIC } from '../../shared/util/metrics.ts';
import { realtime, routes, streams, workers } from '../../shared/routes.ts';
import { VALIDATOR_ENV_VARS } from '../../shared/email/validator/config.ts';
import { accessLogFormat, ACCESS_LOG_FIELDS } from '../../infra/api.ts';
import { THRESHOLDS } from '../../infra/monitoring.ts';
import { addNagPacks } from '../../infra/nag.ts';
import { DEFAULT_AUTH_CACHE_SECONDS, DEFAULT_THROTTLE } from '../../infra/settings.ts';
import { MessagingAndEmailValidationStack } from '../../infra/stack.ts';
import { ALARM_METRIC_BUDGET, alarmMetrics, billedAlarmMetrics, unwatched } from '../steps/alarm-coverage.ts';
import { functionsDir, logicalIdOf, synthStack, testApp } from '../steps/cdk-app.ts';

/** What an operator gets from the synthesized template: logs, traces, limits, alarms, the dashboard, and the rule packs. */
const { stack, template } = synthStack();
const logicalId = (c: { node: { defaultChild?: unknown } }) => logicalIdOf(stack, c);
const resources = (t: typeof template, type: string) =>
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  Object.entries(t.findResources(type) as Record<string, { Properties: any; DependsOn?: string[] }>);
const functionCount = stack.namedFunctions().size;
const apiCount = stack.apis.size;

describe('function logs and traces', () => {
  it('has every function log JSON at the deploy log level, trace actively, and name its service', () => {
    const functions = resources(template, 'AWS::Lambda::Function');
    expect(functions).toHaveLength(functionCount);
    for (const [, { Properties: p }] of functions) {
      expect(p.LoggingConfig).toMatchObject({ LogFormat: 'JSON', ApplicationLogLevel: 'INFO', SystemLogLevel: 'WARN' });
      expect(p.TracingConfig).toEqual({ Mode: 'Active' });
      expect(p.Environment.Variables.POWERTOOLS_SERVICE_NAME).toBe('test-stack');
    }
  });

  it('takes the log level from the logLevel context value', () => {
    const { template: debug } = synthStack({ logLevel: 'debug' }, 'DebugStack');
    for (const [, { Properties: p }] of resources(debug, 'AWS::Lambda::Function'))
      expect(p.LoggingConfig.ApplicationLogLevel).toBe('DEBUG');
    expect(() => synthStack({ logLevel: 'chatty' }, 'BadLevel')).toThrow(/logLevel/);
  });

  it('lets each role write only to the log groups of the functions that use it, with retention', () => {
    const functions = resources(template, 'AWS::Lambda::Function');
    const logGroupOf = (fn: { node: { defaultChild?: unknown } }) =>
      functions.find(([id]) => id === logicalId(fn))![1].Properties.LoggingConfig.LogGroup.Ref as string;
    const members = Map.groupBy(stack.namedFunctions().values(), (fn) => logicalId(fn.role!));
    for (const [role, fns] of members) {
      const logGroups = fns.map(logGroupOf);
      const statements = resources(template, 'AWS::IAM::Policy')
        .filter(([, p]) => p.Properties.Roles.some((r: { Ref: string }) => r.Ref === role))
        .flatMap(([, p]) => p.Properties.PolicyDocument.Statement);
      const logs = statements.filter((s: { Action: string | string[] }) => [s.Action].flat().some((a) => a.startsWith('logs:')));
      expect(logs, role).toHaveLength(1);
      expect(logs[0].Action, role).toEqual(['logs:CreateLogStream', 'logs:PutLogEvents']);
      const granted = [logs[0].Resource]
        .flat()
        .map((r: { 'Fn::GetAtt': [string, string] }) => r['Fn::GetAtt'])
        .map(([id, attribute]: [string, string]) => (attribute === 'Arn' ? id : `${id}.${attribute}`));
      expect(granted.sort(), role).toEqual([...logGroups].sort());
      // No managed policy (the default one may write to any log group of the account).
      expect(resources(template, 'AWS::IAM::Role').find(([id]) => id === role)![1].Properties.ManagedPolicyArns, role).toBeUndefined();
    }
    for (const [, { Properties: p }] of resources(template, 'AWS::Logs::LogGroup')) expect(p.RetentionInDays).toBe(30);
  });
});

describe('API stages', () => {
  const stages = resources(template, 'AWS::ApiGateway::Stage');

  it('trace with X-Ray and log execution errors on both stages, after the account logging role is in place', () => {
    expect(stages).toHaveLength(apiCount);
    const account = logicalId({ node: { defaultChild: stack.node.findChild('ApiGatewayAccount') } });
    for (const [, stage] of stages) {
      expect(stage.Properties.TracingEnabled).toBe(true);
      expect(stage.Properties.MethodSettings).toContainEqual(expect.objectContaining({ LoggingLevel: 'ERROR', DataTraceEnabled: false }));
      expect(stage.DependsOn).toContain(account);
    }
    template.hasResourceProperties('AWS::ApiGateway::Account', {
      CloudWatchRoleArn: { 'Fn::GetAtt': [logicalId(stack.apiGatewayLogsRole!), 'Arn'] },
    });
    template.hasResource('AWS::ApiGateway::Account', { DeletionPolicy: 'Retain' });
  });

  it('leaves the account logging role alone when told the account has one', () => {
    const { template: without } = synthStack({ apiGatewayCloudWatchRole: 'false' }, 'NoRoleStack');
    without.resourceCountIs('AWS::ApiGateway::Account', 0);
  });

  it('write JSON access logs with the request, caller, status, latencies and account to a log group with retention', () => {
    for (const [, stage] of stages) {
      const { DestinationArn, Format } = stage.Properties.AccessLogSetting;
      const refs = [...JSON.stringify(DestinationArn).matchAll(/"Ref":"([^"]+)"/g)].map((m) => m[1]);
      const groups = resources(template, 'AWS::Logs::LogGroup').filter(([id]) => refs.includes(id));
      expect(groups).toHaveLength(1);
      expect(groups[0]![1].Properties.RetentionInDays).toBe(30);
      expect(Format).toBe(accessLogFormat());
    }
    // What one line looks like once API Gateway fills it in (the error message comes quoted).
    const sample = accessLogFormat()
      .replace('$context.error.messageString', JSON.stringify('Unauthorized "quoted"'))
      .replace(/\$context\.[A-Za-z.]+/g, 'x');
    const line = JSON.parse(sample);
    expect(Object.keys(line).sort()).toEqual([...Object.keys(ACCESS_LOG_FIELDS), 'error'].sort());
    expect(ACCESS_LOG_FIELDS).toMatchObject({
      requestId: '$context.requestId',
      sourceIp: '$context.identity.sourceIp',
      method: '$context.httpMethod',
      path: '$context.path',
      status: '$context.status',
      latencyMs: '$context.responseLatency',
      integrationLatencyMs: '$context.integrationLatency',
      accountId: '$context.authorizer.accountId',
    });
  });

  it('throttle at the deploy values, defaulting to 100 rps with bursts of 200', () => {
    expect(DEFAULT_THROTTLE).toEqual({ rateLimit: 100, burstLimit: 200 });
    for (const [, stage] of stages) {
      expect(stage.Properties.MethodSettings).toContainEqual(
        expect.objectContaining({ ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 }),
      );
    }
    const { template: custom } = synthStack({ apiThrottleRate: '25', apiThrottleBurst: '40' }, 'ThrottledStack');
    for (const [, stage] of resources(custom, 'AWS::ApiGateway::Stage')) {
      expect(stage.Properties.MethodSettings).toContainEqual(
        expect.objectContaining({ ThrottlingRateLimit: 25, ThrottlingBurstLimit: 40 }),
      );
    }
    expect(() => synthStack({ apiThrottleRate: '0' }, 'Bad1')).toThrow(/apiThrottleRate/);
    expect(() => synthStack({ apiThrottleBurst: '2.5' }, 'Bad2')).toThrow(/apiThrottleBurst/);
  });
});

describe('authorizer cache', () => {
  const ttls = (t: typeof template) =>
    resources(t, 'AWS::ApiGateway::Authorizer').map(([, a]) => a.Properties.AuthorizerResultTtlInSeconds);

  it("keeps a token's answer AUTH_CACHE_SECONDS (default 60; 0 turns caching off) and refuses other values", () => {
    expect(DEFAULT_AUTH_CACHE_SECONDS).toBe(60);
    expect(ttls(template)).toEqual([60, 60]);
    expect(ttls(synthStack({ AUTH_CACHE_SECONDS: '0' }, 'NoAuthCache').template)).toEqual([0, 0]);
    expect(ttls(synthStack({ AUTH_CACHE_SECONDS: '300' }, 'LongAuthCache').template)).toEqual([300, 300]);
    for (const bad of ['-1', '1.5', 'ten', '3601']) {
      expect(() => synthStack({ AUTH_CACHE_SECONDS: bad }, `BadAuthCache${bad.replace(/\W/g, '')}`), bad).toThrow(/AUTH_CACHE_SECONDS/);
    }
  });
});

describe('limits', () => {
  it('caps each worker event source at its maximum concurrency, so a backlog cannot starve the APIs', () => {
    const mappings = resources(template, 'AWS::Lambda::EventSourceMapping');
    expect(mappings).toHaveLength(workers.length + streams.length);
    for (const [worker, fn] of stack.workerFunctions) {
      const [, mapping] = mappings.find(([, m]) => m.Properties.FunctionName.Ref === logicalId(fn))!;
      expect(mapping.Properties.ScalingConfig).toEqual({ MaximumConcurrency: worker.maxConcurrency });
      expect(worker.maxConcurrency).toBeGreaterThanOrEqual(2); // Lambda's minimum
    }
    // All workers together stay a small share of the default 1,000 concurrent executions.
    expect(workers.reduce((sum, w) => sum + w.maxConcurrency, 0)).toBeLessThanOrEqual(13);
    // Nothing reserved: a reservation is taken from the account's pool even when idle.
    for (const [, { Properties: p }] of resources(template, 'AWS::Lambda::Function'))
      expect(p.ReservedConcurrentExecutions).toBeUndefined();
  });
});

describe('alarms', () => {
  const alarms = resources(template, 'AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
  const named = (suffix: string) => alarms.find((a) => a.AlarmName === `test-stack-${suffix}`);
  const queueName = (q: { node: { defaultChild?: unknown } }) => ({ 'Fn::GetAtt': [logicalId(q), 'QueueName'] });

  it('has one alarm per queue family, stream consumer, API figure, the failed-invocations queue, the realtime stage and one business figure', () => {
    const queueCount = Object.keys(stack.queues).length;
    expect(alarms).toHaveLength(queueCount + streams.length + 1 + 2 * apiCount + 1 + 1);
    for (const a of alarms) {
      expect(a.TreatMissingData).toBe('notBreaching');
      expect(a.AlarmDescription).toContain('docs/operations.md');
    }
  });

  it("reads no function metric but the stream consumers' iterator age: each metric an alarm reads is billed", () => {
    const lambda = alarms.flatMap(alarmMetrics).filter((m) => m.Namespace === 'AWS/Lambda');
    expect(lambda.map((m) => m.MetricName)).toEqual(streams.map(() => 'IteratorAge'));
    // An idle month stays under $5: the KMS key ($1), the sweeper's runs (about $0.02) and $0.10 per alarm metric, with room
    // for the dashboard ($3) when asked for.
    expect(billedAlarmMetrics(template)).toBeLessThanOrEqual(ALARM_METRIC_BUDGET);
  });

  it('covers every function: whatever way it fails ends where an alarm watches', () => {
    expect(unwatched(template)).toEqual([]);
    // LocalStack flavour: no WebSocket API, no authorizers.
    expect(unwatched(synthStack({ target: 'localstack' }, 'LocalStackAlarms').template)).toEqual([]);
  });

  it('finds a function or a queue nobody watches (a check that cannot fail proves nothing)', () => {
    const json = structuredClone(template.toJSON()) as { Resources: Record<string, { Type: string }> };
    const [fn, definition] = Object.entries(json.Resources).find(([, r]) => r.Type === 'AWS::Lambda::Function')!;
    json.Resources[`${fn}Copy`] = definition;
    json.Resources.CarelessQueue = { Type: 'AWS::SQS::Queue' };
    expect(unwatched(Template.fromJSON(json))).toEqual([`${fn}Copy`, 'queue CarelessQueue']);
  });

  it('fires on a message reaching a dead-letter queue, or on a work queue message older than the threshold, one alarm per family', () => {
    for (const [name, queue] of Object.entries(stack.queues)) {
      const alarm = named(`${name}-queue`)!;
      expect(alarm, name).toMatchObject({ Threshold: 0, ComparisonOperator: 'GreaterThanThreshold', EvaluationPeriods: 1 });
      const limit = THRESHOLDS.queueAgeSeconds[name as keyof typeof THRESHOLDS.queueAgeSeconds];
      expect(alarm.Metrics.find((m: { ReturnData: boolean }) => m.ReturnData).Expression).toContain(`> ${limit}`);
      const onQueue = { Name: 'QueueName', Value: queueName(queue) };
      const onDlq = { Name: 'QueueName', Value: queueName(stack.deadLetterQueues[name as keyof typeof stack.deadLetterQueues]) };
      // Drained by a worker within seconds: its receives count each arrival, where its depth would rarely see one.
      const deadLetters = workers.some((w) => w.deadLetters && w.queue === name)
        ? 'NumberOfMessagesReceived'
        : 'ApproximateNumberOfMessagesVisible';
      expect(alarmMetrics(alarm)).toEqual(
        expect.arrayContaining([
          { Namespace: 'AWS/SQS', MetricName: 'ApproximateAgeOfOldestMessage', Dimensions: [onQueue] },
          { Namespace: 'AWS/SQS', MetricName: deadLetters, Dimensions: [onDlq] },
        ]),
      );
    }
    expect(workers.some((w) => w.deadLetters)).toBe(true);
  });

  it('fires on a stream consumer falling behind, and on anything Lambda gives up on (stream batches, scheduled runs)', () => {
    for (const [consumer, fn] of stack.streamFunctions) {
      expect(named(`${consumer.name}-iterator-age`)).toMatchObject({
        Namespace: 'AWS/Lambda',
        MetricName: 'IteratorAge',
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: logicalId(fn) } }],
        Threshold: THRESHOLDS.streamIteratorAgeMs,
      });
    }
    expect(named('failed-invocations')).toMatchObject({
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: queueName(stack.failedInvocationsQueue) }],
      Threshold: 0,
    });
  });

  it('fires on any 5xx and on the p99 latency of each API', () => {
    for (const api of stack.apis.keys()) {
      expect(named(`${api}-api-5xx`)).toMatchObject({
        Namespace: 'AWS/ApiGateway',
        MetricName: '5XXError',
        Statistic: 'Sum',
        Dimensions: expect.arrayContaining([{ Name: 'ApiName', Value: `test-stack-${api}` }]),
        Threshold: 0,
      });
      const p99 = named(`${api}-api-p99-latency`)!;
      expect(p99.Threshold).toBe(THRESHOLDS.p99LatencyMs[api]);
      expect(p99).toMatchObject({
        ExtendedStatistic: 'p99',
        MetricName: 'Latency',
        Dimensions: expect.arrayContaining([{ Name: 'ApiName', Value: `test-stack-${api}` }]),
      });
    }
  });

  it("fires on the realtime stage's integration and execution errors, and on the realtime authorizer's failed lookups (it refuses by failing)", () => {
    const errors = named('realtime-api-errors')!;
    expect(errors.Threshold).toBe(0);
    const onStage = [
      { Name: 'ApiId', Value: { Ref: logicalId(stack.realtime!.api) } },
      { Name: 'Stage', Value: 'prod' },
    ];
    expect(alarmMetrics(errors)).toEqual([
      { Namespace: 'AWS/ApiGateway', MetricName: 'IntegrationError', Dimensions: onStage },
      { Namespace: 'AWS/ApiGateway', MetricName: 'ExecutionError', Dimensions: onStage },
    ]);
    // The authorizer's failed lookups and the webhook events given up: one metric both count, one alarm (each metric read is billed)
    expect(named('attention-needed')).toMatchObject({ MetricName: 'AttentionNeeded', Threshold: 0 });
    // Files left in the bucket after their last attachment went count there too (shared/util/metrics.ts): no alarm of their own
    expect(named('attention-needed')!.AlarmDescription).toContain('a file could not be deleted');
    expect(stack.namedFunctions().size).toBe(
      routes.length + 2 * apiCount + workers.length + streams.length + 1 + realtime.routes.length + 1,
    );
  });

  it('notifies nobody unless asked, and the synth says so; an e-mail gets a topic, a topic ARN is used as is', () => {
    template.resourceCountIs('AWS::SNS::Topic', 0);
    for (const a of alarms) expect(a.AlarmActions).toBeUndefined();
    const nobody = Match.stringLikeRegexp('alarms notify nobody: deploy with -c alarmEmail=');
    Annotations.fromStack(stack).hasWarning('*', nobody);

    const { stack: mailedStack, template: mailed } = synthStack({ alarmEmail: 'ops@example.com' }, 'MailedStack');
    Annotations.fromStack(mailedStack).hasNoWarning('*', nobody);
    mailed.resourceCountIs('AWS::SNS::Topic', 1);
    mailed.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com' });
    const topic = resources(mailed, 'AWS::SNS::Topic')[0]![0];
    for (const [, a] of resources(mailed, 'AWS::CloudWatch::Alarm')) {
      expect(a.Properties.AlarmActions).toEqual([{ Ref: topic }]);
      expect(a.Properties.OKActions).toEqual([{ Ref: topic }]);
    }

    const arn = 'arn:aws:sns:eu-west-1:123456789012:ops-alarms';
    const { template: existing } = synthStack({ alarmTopicArn: arn }, 'TopicStack');
    existing.resourceCountIs('AWS::SNS::Topic', 0);
    for (const [, a] of resources(existing, 'AWS::CloudWatch::Alarm')) expect(a.Properties.AlarmActions).toEqual([arn]);

    expect(() => synthStack({ alarmEmail: 'not an address' }, 'BadMail')).toThrow(/alarmEmail/);
  });
});

describe('dashboard', () => {
  it('is there only when asked for: it costs $3 a month, more than the rest of an idle deployment', () => {
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 0);
    expect(Object.keys(template.toJSON().Outputs)).not.toContain('DashboardName');
    expect(() => synthStack({ dashboard: 'yes' }, 'BadDashboard')).toThrow(/dashboard must be 'true' or 'false'/);
  });

  it('is one dashboard with the API, queue, function and business figures and every alarm', () => {
    const { template } = synthStack({ dashboard: 'true' }, 'DashboardStack');
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    const [, dashboard] = resources(template, 'AWS::CloudWatch::Dashboard')[0]!;
    const body = JSON.stringify(dashboard.Properties.DashboardBody);
    for (const metric of [
      '5XXError',
      'Latency',
      'Count',
      'ApproximateAgeOfOldestMessage',
      'ApproximateNumberOfMessagesVisible',
      'Errors',
      'Throttles',
    ]) {
      expect(body).toContain(`\\"${metric}\\"`);
    }
    for (const { name } of Object.values(METRIC)) expect(body).toContain(`\\"${name}\\"`);
    for (const [id] of resources(template, 'AWS::CloudWatch::Alarm')) expect(body).toContain(id);
    template.hasOutput('DashboardName', {});
  });
});

describe('validator settings at deploy', () => {
  it('forwards the validator context values to the functions that validate, and only to them', () => {
    const { template: withSettings } = synthStack({ SMTP_PROBE: 'tcp', DNS_SERVERS: '10.0.0.2' }, 'ValidatorStack');
    const fns = resources(withSettings, 'AWS::Lambda::Function').map(([, f]) => f.Properties.Environment.Variables);
    const validating = fns.filter((v) => v.SMTP_PROBE === 'tcp');
    const expected = routes.filter((r) => r.validates).length + workers.filter((w) => w.validates).length;
    expect(expected).toBeGreaterThan(0);
    expect(validating).toHaveLength(expected);
    for (const v of validating) expect(v.DNS_SERVERS).toBe('10.0.0.2');
  });

  it("never ships the deployer's shell environment, and says so", () => {
    const saved = { ...process.env };
    Object.assign(process.env, { SMTP_PROBE: 'tcp', DNS_SERVERS: '10.0.0.2', ALLOW_PRIVATE_MX: 'true' });
    try {
      const { stack: fromShell, template: shellTemplate } = synthStack({}, 'ShellStack');
      for (const [, f] of resources(shellTemplate, 'AWS::Lambda::Function')) {
        for (const name of VALIDATOR_ENV_VARS) expect(f.Properties.Environment.Variables).not.toHaveProperty(name);
      }
      Annotations.fromStack(fromShell).hasWarning(
        '*',
        Match.stringLikeRegexp('Not forwarded from your shell: DNS_SERVERS, SMTP_PROBE, ALLOW_PRIVATE_MX'),
      );
    } finally {
      process.env = saved;
    }
  });

  it('refuses ALLOW_PRIVATE_MX for a deployed stack, and a bad validator setting', () => {
    expect(() => synthStack({ ALLOW_PRIVATE_MX: 'true' }, 'PrivateStack')).toThrow(/ALLOW_PRIVATE_MX is for local runs/);
    expect(() => synthStack({ ALLOW_PRIVATE_MX: 'false' }, 'PrivateStack2')).toThrow(/ALLOW_PRIVATE_MX/);
    expect(() => synthStack({ SMTP_PROBE: 'sometimes' }, 'BadStack')).toThrow(/SMTP_PROBE/);
  });
});

describe('cdk-nag (AwsSolutions and Serverless packs)', () => {
  const outdirs: string[] = [];
  afterAll(() => outdirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

  /** Synthesizes an app with both packs; resolves to the report's error findings (none when the synth passes). */
  function nagErrors(context: Record<string, unknown>, extend?: (stack: MessagingAndEmailValidationStack) => void): string[] {
    const outdir = fs.mkdtempSync(path.join(tmpdir(), 'nag-'));
    outdirs.push(outdir);
    const app = testApp(context, outdir);
    const nagged = new MessagingAndEmailValidationStack(app, 'NagStack', { stackName: 'nag-stack', functionsDir: functionsDir() });
    extend?.(nagged);
    addNagPacks(app);
    try {
      app.synth();
      return [];
    } catch (error) {
      const reportFile = path.join(outdir, 'validation-report.json');
      if (!fs.existsSync(reportFile)) throw error;
      const report = JSON.parse(fs.readFileSync(reportFile, 'utf8'));
      return report.pluginReports.flatMap(
        (p: { violations: { severity: string; ruleName: string; violatingConstructs: { constructPath: string }[] }[] }) =>
          p.violations
            .filter((v) => v.severity === 'error')
            .flatMap((v) => v.violatingConstructs.map((c) => `${v.ruleName} at ${c.constructPath}`)),
      );
    }
  }

  it('finds no unacknowledged error in the stack as deployed by default, or with the options that add resources', () => {
    expect(nagErrors({})).toEqual([]);
    expect(
      nagErrors({
        alarmEmail: 'ops@example.com',
        SMTP_PROBE: 'tcp',
        apiThrottleRate: '50',
        CORS_ORIGINS: 'https://app.example.com,https://admin.example.com',
        dashboard: 'true',
      }),
    ).toEqual([]);
    // The LocalStack flavour: route methods without an authorizer, each acknowledged because its handler authenticates.
    expect(nagErrors({ target: 'localstack' })).toEqual([]);
  });

  it('fails the synth on a finding nobody acknowledged', () => {
    const errors = nagErrors({}, (s) => new Queue(s, 'Careless', {}));
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^AwsSolutions-SQS3 at NagStack\/Careless/),
        expect.stringMatching(/^AwsSolutions-SQS4 at NagStack\/Careless/),
      ]),
    );
  });
});
