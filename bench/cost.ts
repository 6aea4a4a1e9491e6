/**
 * What each operation costs on AWS, computed from what the code does here:
 * every DynamoDB call of the run asks for its consumed capacity
 * (`ReturnConsumedCapacity: TOTAL`), every function invocation is counted and
 * timed (handler time on this machine: an estimate of Lambda's billed
 * duration), every request through the gateway is an API Gateway request,
 * and every SQS call is counted. A sample of each operation is run and scaled
 * to the quantities priced; the code decides what a request does, so a change
 * of the send path (delivery to every participant, for one) changes the
 * figures without a change here.
 *
 * Run alone with `npx tsx bench/cost.ts`; `npm run bench` runs it in its own process.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { db } from '#shared/db/client';
import { MEMORY_MB, schedules, workers } from '#shared/routes';
import { sqsClient } from '#shared/util/sqs';
import { MessagingAndEmailValidationStack } from '../infra/stack.ts';
import { dispatch } from '../scripts/local/api-gateway.ts';
import { startDnsServer } from '../scripts/local/dns-server.ts';
import { invoke, type Invoker } from '../scripts/local/lambda.ts';
import { startBackends, startWorkers, useBackends } from '../scripts/local/runtime.ts';
import { seedDemo, type DemoSeed } from '../scripts/local/seed.ts';
import { startMailboxServer } from '../test/steps/smtp-mailboxes.ts';
import { billedUnits, READS } from '../test/steps/dynamodb-calls.ts';
import { resetValidatorConfig } from '#shared/email/validator/index';

/** us-east-1 list prices (USD), free tiers left out. */
export const PRICES = {
  date: '2026-11-25',
  source:
    'AWS pricing pages, us-east-1, as the project records them (DynamoDB on-demand after the November 2024 reduction); not fetched by the bench',
  lambdaPerRequest: 0.2 / 1e6,
  lambdaPerGbSecondArm: 0.0000133334,
  apiGatewayRestPerRequest: 3.5 / 1e6,
  dynamoPerWriteUnit: 0.625 / 1e6,
  dynamoPerReadUnit: 0.125 / 1e6,
  sqsPerRequest: 0.4 / 1e6,
  /** A standard alarm is billed per metric it reads: a metric-math alarm over three metrics costs three. */
  alarmMetricPerMonth: 0.1,
  dashboardPerMonth: 3,
  /** A customer managed KMS key (the webhook secrets' sealing key), whether used or not; its requests are priced apart and negligible idle. */
  kmsKeyPerMonth: 1,
};

/** NeverBounce's list price for 1,000 verifications, beside ours. */
export const NEVERBOUNCE_PER_1000 = 4;

const SAMPLE = Number(process.env.BENCH_COST_SAMPLE ?? 200);
const LIST_SAMPLE = 100;
const IMPORT_SAMPLE = 500;
const SWEEPER_RUNS = 5;
const MINUTES_PER_MONTH = 60 * 24 * 30;

interface Usage {
  readUnits: number;
  writeUnits: number;
  invocations: number;
  /** Lambda bills each invocation by the millisecond, rounded up. */
  billedMs: number;
  apiRequests: number;
  sqsRequests: number;
}

const empty = (): Usage => ({ readUnits: 0, writeUnits: 0, invocations: 0, billedMs: 0, apiRequests: 0, sqsRequests: 0 });
let usage = empty();
/** Work done inside `unmetered()` (the bench waiting for a list) is not the operation's, whatever runs beside it. */
const bench = new AsyncLocalStorage<true>();
const unmetered = <T>(work: () => Promise<T>) => bench.run(true, work);
const metered = () => bench.getStore() === undefined;

function meterDynamoDb(): void {
  db().middlewareStack.add(
    (next, context) => async (args) => {
      (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'INDEXES';
      const out = await next(args);
      if (!metered()) return out;
      const command = String(context.commandName ?? '');
      const units = billedUnits(command, (out.output as { ConsumedCapacity?: unknown }).ConsumedCapacity);
      if (READS.test(command)) usage.readUnits += units;
      else usage.writeUnits += units;
      return out;
    },
    { step: 'initialize', name: 'bench-consumed-capacity' },
  );
}

async function meterSqs(): Promise<void> {
  (await sqsClient()).middlewareStack.add(
    (next) => async (args) => {
      if (metered()) usage.sqsRequests += 1;
      return next(args);
    },
    { step: 'initialize', name: 'bench-sqs-requests' },
  );
}

/** Runs a function as Lambda would and bills it; an event source batch also costs its ReceiveMessage and DeleteMessageBatch. */
const billed: Invoker = async (fn, event, timeoutSeconds) => {
  const started = performance.now();
  try {
    return await invoke(fn.handler, event, timeoutSeconds);
  } finally {
    if (metered()) {
      usage.invocations += 1;
      usage.billedMs += Math.ceil(performance.now() - started);
      if (workers.some((w) => w.handler === fn.handler)) usage.sqsRequests += 2;
    }
  }
};

/**
 * A request through the gateway, with the authorizer's answer cached as on
 * AWS (AUTH_CACHE_SECONDS): it is not invoked per request. As the demo user
 * (its token), or as the account's backend (`secret`: its secret key).
 */
function caller(tenant: DemoSeed, as: 'user' | 'secret' = 'user') {
  const context =
    as === 'user'
      ? { kind: 'user', accountId: tenant.accountId, contactId: tenant.userContactId }
      : { kind: 'secret', accountId: tenant.accountId, keyId: 'key_cost' };
  const cachedAuthorizer: Invoker = async (fn, event, timeoutSeconds) =>
    fn.handler === 'auth/authorizer'
      ? {
          principalId: tenant.userContactId,
          policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: '*' }] },
          context,
        }
      : billed(fn, event, timeoutSeconds);
  return async (api: 'messaging' | 'email', method: string, url: string, body?: string, contentType = 'application/json') => {
    if (metered()) usage.apiRequests += 1;
    const res: APIGatewayProxyResult = await dispatch(
      api,
      {
        method,
        url,
        headers: {
          authorization: `Bearer ${as === 'user' ? tenant.token : tenant.secretKey}`,
          ...(body ? { 'content-type': contentType } : {}),
        },
        body: body ?? '',
      },
      cachedAuthorizer,
    );
    if (res.statusCode >= 300) throw new Error(`${method} ${url} answered ${res.statusCode}: ${res.body}`);
    return JSON.parse(res.body) as Record<string, unknown>;
  };
}

/** Runs `work` with fresh meters; returns what it used. */
async function measure(work: () => Promise<void>): Promise<Usage> {
  usage = empty();
  await work();
  const used = usage;
  usage = empty();
  return used;
}

const dollars = (u: Usage) => ({
  dynamodb: u.readUnits * PRICES.dynamoPerReadUnit + u.writeUnits * PRICES.dynamoPerWriteUnit,
  lambda: u.invocations * PRICES.lambdaPerRequest + (u.billedMs / 1000) * (MEMORY_MB / 1024) * PRICES.lambdaPerGbSecondArm,
  apiGateway: u.apiRequests * PRICES.apiGatewayRestPerRequest,
  sqs: u.sqsRequests * PRICES.sqsPerRequest,
});

export interface CostRow {
  what: string;
  sample: string;
  /** Per the priced quantity. */
  usage: Usage;
  cost: ReturnType<typeof dollars> & { other?: number; total: number };
  note?: string;
}

const scaled = (u: Usage, factor: number): Usage =>
  Object.fromEntries(Object.entries(u).map(([k, v]) => [k, v * factor])) as unknown as Usage;

function row(what: string, sample: string, used: Usage, factor: number, other = 0, note?: string): CostRow {
  const u = scaled(used, factor);
  const d = dollars(u);
  return {
    what,
    sample,
    usage: u,
    cost: { ...d, ...(other ? { other } : {}), total: d.dynamodb + d.lambda + d.apiGateway + d.sqs + other },
    note,
  };
}

/** What the stack bills by the month whatever its traffic (alarms and the metrics they read, dashboards, KMS keys), counted in its template (bundling skipped). */
function monitoringResources(): { alarms: number; alarmMetrics: number; dashboards: number; kmsKeys: number } {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new MessagingAndEmailValidationStack(app, 'CostStack', { stackName: 'cost' });
  const template = Template.fromStack(stack);
  const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')) as {
    Properties: { Metrics?: { MetricStat?: unknown }[] };
  }[];
  return {
    alarms: alarms.length,
    alarmMetrics: alarms.reduce((n, a) => n + (a.Properties.Metrics ? a.Properties.Metrics.filter((m) => m.MetricStat).length : 1), 0),
    dashboards: Object.keys(template.findResources('AWS::CloudWatch::Dashboard')).length,
    kmsKeys: Object.keys(template.findResources('AWS::KMS::Key')).length,
  };
}

export async function costs(): Promise<CostRow[]> {
  const domains = Array.from({ length: 10 }, (_, i) => `d${i}.cost`);
  const dns = await startDnsServer(
    Object.fromEntries(
      domains.flatMap((d) => [
        [d, { mx: [{ priority: 10, exchange: `mx.${d}` }] }],
        [`mx.${d}`, { a: ['127.0.0.1'] }],
      ]),
    ),
  );
  Object.assign(process.env, { DNS_SERVERS: dns.address, ALLOW_PRIVATE_MX: 'true', SMTP_PROBE: 'off' });
  const backends = await startBackends();
  try {
    useBackends(backends.env);
    meterDynamoDb();
    await meterSqs();
    const tenant = await seedDemo();
    const call = caller(tenant);
    const form = 'application/x-www-form-urlencoded';
    const conversation = (await call('messaging', 'POST', '/v1/conversations', `contact_id=${tenant.contactIds.bob}`, form)).id as string;
    // Warm: the first call of each path loads modules and fills per-container caches, as a warm Lambda has.
    await call('messaging', 'POST', '/v1/messages', `conversation_id=${conversation}&message=warm`, form);
    await call('messaging', 'GET', `/v1/messages?conversation_id=${conversation}&limit=10`);

    const send = await measure(async () => {
      for (let i = 0; i < SAMPLE; i++)
        await call('messaging', 'POST', '/v1/messages', `conversation_id=${conversation}&message=cost${i}`, form);
    });
    const backend = caller(tenant, 'secret');
    await backend('messaging', 'POST', '/v1/contacts', JSON.stringify({ username: 'warm' }));
    const provisioned = await measure(async () => {
      for (let i = 0; i < SAMPLE; i++) {
        const contact = await backend('messaging', 'POST', '/v1/contacts', JSON.stringify({ username: `user${i}` }));
        await backend('messaging', 'POST', `/v1/contacts/${String(contact.id)}/tokens`, '{}');
      }
    });
    const read = await measure(async () => {
      for (let i = 0; i < SAMPLE; i++) await call('messaging', 'GET', `/v1/messages?conversation_id=${conversation}&limit=10`);
    });

    /** What `fill` (a list's addresses going in, answering the list) costs with the workers, until the list is `completed`. */
    const untilCompleted = async (fill: () => Promise<number>): Promise<Usage> => {
      const pool = startWorkers(backends.env, { waitSeconds: 1, run: billed });
      let stopped = false;
      const stopWorkers = async () => {
        if (!stopped) await pool.stop();
        stopped = true;
      };
      try {
        return await measure(async () => {
          const list = await fill();
          for (const until = performance.now() + 300_000; performance.now() < until;) {
            const status = (await unmetered(() => call('email', 'GET', `/api/v1/emailList/${list}`))).status;
            // A worker records `completed` before it returns: its invocation ends, and is billed, when the workers stop.
            if (status === 'completed') return stopWorkers();
            await new Promise((r) => setTimeout(r, 200));
          }
          throw new Error('the cost list did not complete within 5 minutes');
        });
      } finally {
        await stopWorkers();
      }
    };
    /** A list of LIST_SAMPLE addresses added in one request. */
    const validateList = () =>
      untilCompleted(async () => {
        const list = (await call('email', 'POST', '/api/v1/emailList', JSON.stringify({ name: 'cost' }))).id as number;
        const emails = Array.from({ length: LIST_SAMPLE }, (_, i) => `user${i}@${domains[i % domains.length]}`);
        await call('email', 'POST', `/api/v1/emailList/${list}/emails`, JSON.stringify({ emails }));
        return list;
      });
    const validated = await validateList();

    /** IMPORT_SAMPLE rows imported from a CSV (the import job on the purge queue's worker). */
    const importList = () =>
      untilCompleted(async () => {
        const list = (await call('email', 'POST', '/api/v1/emailList', JSON.stringify({ name: 'cost import' }))).id as number;
        const created = await call('email', 'POST', `/api/v1/emailList/${list}/imports`, '{}');
        const upload = created.upload as { url: string; headers: Record<string, string> };
        const rows = Array.from({ length: IMPORT_SAMPLE }, (_, i) => `"Row, ${i}",row${i}@${domains[i % domains.length]}`);
        const put = await fetch(upload.url, { method: 'PUT', headers: upload.headers, body: `name,email\n${rows.join('\n')}\n` });
        if (!put.ok) throw new Error(`the cost import's upload answered ${put.status}`);
        // The first GET starts the import at once, as a polling client's does; the list is completed only once its rows are in.
        await call('email', 'GET', `/api/v1/emailList/${list}/imports/${String(created.id)}`);
        for (const until = performance.now() + 300_000; performance.now() < until;) {
          const shown = await unmetered(() => call('email', 'GET', `/api/v1/emailList/${list}/imports/${String(created.id)}`));
          if (shown.status === 'completed') return list;
          await new Promise((r) => setTimeout(r, 200));
        }
        throw new Error('the cost import did not complete within 5 minutes');
      });
    const imported = await importList();
    // The mailbox probe: an SMTP server on loopback answering like a remote one (50 to 200 ms a command), half the mailboxes existing.
    const existing = Object.fromEntries(Array.from({ length: LIST_SAMPLE / 2 }, (_, i) => [`user${i}`, 'exists' as const]));
    const smtp = await startMailboxServer(Object.fromEntries(domains.map((d) => [d, { mailboxes: existing }])), {
      latencyMs: () => 50 + Math.random() * 150,
    });
    let probed: Usage;
    try {
      Object.assign(process.env, { SMTP_PROBE: 'rcpt', SMTP_PORT: String(smtp.port), SMTP_TIMEOUT_MS: '5000' });
      resetValidatorConfig();
      probed = await validateList();
    } finally {
      Object.assign(process.env, { SMTP_PROBE: 'off' });
      resetValidatorConfig();
      await smtp.stop();
    }
    const sweeper = schedules.find((s) => s.name === 'sweeper')!;
    const idle = await measure(async () => {
      for (let i = 0; i < SWEEPER_RUNS; i++) await billed({ handler: sweeper.handler }, {}, sweeper.timeoutSeconds);
    });
    const monitoring = monitoringResources();
    const fixed =
      monitoring.alarmMetrics * PRICES.alarmMetricPerMonth +
      monitoring.dashboards * PRICES.dashboardPerMonth +
      monitoring.kmsKeys * PRICES.kmsKeyPerMonth;
    return [
      row('1,000,000 messages sent (`POST /v1/messages`)', `${SAMPLE} sent`, send, 1e6 / SAMPLE),
      row('1,000,000 message pages read (`GET /v1/messages`, 10 per page)', `${SAMPLE} read`, read, 1e6 / SAMPLE),
      row(
        '1,000 users provisioned by the app’s backend (`POST /v1/contacts` and `POST /v1/contacts/{id}/tokens`)',
        `${SAMPLE} users`,
        provisioned,
        1000 / SAMPLE,
      ),
      row(
        '1,000 emails validated through a list (DNS mode, `SMTP_PROBE=off`)',
        `${LIST_SAMPLE} addresses on ${domains.length} domains, one add, until \`completed\``,
        validated,
        1000 / LIST_SAMPLE,
        0,
        `NeverBounce: $${NEVERBOUNCE_PER_1000.toFixed(2)} per 1,000`,
      ),
      row(
        '1,000,000 addresses imported from a CSV and validated (DNS mode, `SMTP_PROBE=off`)',
        `${IMPORT_SAMPLE} rows on ${domains.length} domains, one file, until the list is \`completed\``,
        imported,
        1e6 / IMPORT_SAMPLE,
        0,
        `NeverBounce: $${(NEVERBOUNCE_PER_1000 * 1000).toLocaleString('en-US')} per 1,000,000; S3 requests (one PUT, a few GETs per file) are under $0.0001`,
      ),
      row(
        '1,000 emails validated through a list, the mailbox probed (`SMTP_PROBE=rcpt`)',
        `${LIST_SAMPLE} addresses on ${domains.length} domains, SMTP answers 50–200 ms, until \`completed\``,
        probed,
        1000 / LIST_SAMPLE,
        0,
        `NeverBounce: $${NEVERBOUNCE_PER_1000.toFixed(2)} per 1,000; a NAT gateway for port 25, if used, is billed apart`,
      ),
      row(
        'One month of an idle deployment (alarms, KMS key, the sweeper every minute)',
        `${SWEEPER_RUNS} sweeper runs on an idle table; ${monitoring.alarms} alarms reading ${monitoring.alarmMetrics} metrics, ${monitoring.kmsKeys} KMS key${monitoring.dashboards ? `, ${monitoring.dashboards} dashboard` : ''}`,
        idle,
        MINUTES_PER_MONTH / SWEEPER_RUNS,
        fixed,
        `EventBridge scheduled rules are free; the event sources’ idle polling of SQS is not included; the dashboard, with \`-c dashboard=true\`, adds $${PRICES.dashboardPerMonth.toFixed(2)}`,
      ),
    ];
  } finally {
    await backends.stop();
    await dns.stop();
  }
}

const money = (n: number) => (n >= 1 ? `$${n.toFixed(2)}` : n >= 0.01 ? `$${n.toFixed(3)}` : `$${n.toFixed(5)}`);

export function costTable(rows: CostRow[]): string {
  const intFmt = (n: number) => Math.round(n).toLocaleString('en-US');
  return [
    `AWS cost, from this run's consumed capacity, invocations and requests, at ${PRICES.source} (${PRICES.date}); Lambda durations are handler time measured here (an estimate), at ${MEMORY_MB} MB arm64; the authorizer's answer is cached as deployed, so it is not invoked per request.`,
    '',
    '| operation | measured on | DynamoDB RRU / WRU | Lambda invocations / GB-s | API Gateway requests | SQS requests | DynamoDB | Lambda | API Gateway | SQS | other | total |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => {
      const u = r.usage;
      const gbs = (u.billedMs / 1000) * (MEMORY_MB / 1024);
      return `| ${r.what} | ${r.sample} | ${intFmt(u.readUnits)} / ${intFmt(u.writeUnits)} | ${intFmt(u.invocations)} / ${intFmt(gbs)} | ${intFmt(u.apiRequests)} | ${intFmt(u.sqsRequests)} | ${money(r.cost.dynamodb)} | ${money(r.cost.lambda)} | ${money(r.cost.apiGateway)} | ${money(r.cost.sqs)} | ${r.cost.other ? money(r.cost.other) : '–'} | **${money(r.cost.total)}**${r.note ? ` (${r.note})` : ''} |`;
    }),
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.env.LOG_LEVEL ??= 'silent';
  const rows = await costs();
  if (process.argv.includes('--json')) console.log(JSON.stringify(rows));
  else console.log(costTable(rows));
  process.exit(0);
}
