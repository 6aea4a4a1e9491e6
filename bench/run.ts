/**
 * Benchmarks, run by hand with `npm run bench` (never by the tests):
 *   - bundle size and module init time of every Lambda bundle `cdk synth` produces;
 *   - latency and throughput of the messaging API on the local server
 *     (real handlers, DynamoDB Local in memory), driven by autocannon.
 * Prints a Markdown table; `--write` also replaces the table in docs/benchmarks.md.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { startLocalStack } from '../scripts/local/runtime.ts';
import { seedDemo } from '../scripts/local/seed.ts';
import { emailThroughput } from './email-throughput.ts';

process.env.LOG_LEVEL = 'silent';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const DURATION_SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = 10;

interface Row {
  what: string;
  value: string;
}

function bundles(): Row[] {
  const out = mkdtempSync(join(tmpdir(), 'bench-synth-'));
  try {
    execFileSync('npx', ['cdk', 'synth', '--quiet', '--output', out], {
      stdio: 'ignore',
      env: { ...process.env, CDK_DISABLE_VERSION_CHECK: '1' },
    });
    const template = JSON.parse(readFileSync(join(out, 'ServerlessMessagingStack.template.json'), 'utf8'));
    const rows: { name: string; kb: number; initMs: number }[] = [];
    for (const [id, resource] of Object.entries<{ Type: string; Metadata?: Record<string, string> }>(template.Resources)) {
      if (resource.Type !== 'AWS::Lambda::Function' || !resource.Metadata?.['aws:asset:path']) continue;
      const file = join(out, resource.Metadata['aws:asset:path'], 'index.mjs');
      // Init time: a fresh Node process importing the bundle, as a cold Lambda does.
      const script = `const t=performance.now();await import(${JSON.stringify(file)});console.log(performance.now()-t)`;
      const samples = Array.from({ length: 5 }, () =>
        Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, TABLE_NAME: 't' } }).toString()),
      ).sort((a, b) => a - b);
      rows.push({ name: id.replace(/[0-9A-F]{8}$/, ''), kb: statSync(file).size / 1024, initMs: samples[2]! });
    }
    const largest = rows.reduce((a, b) => (b.kb > a.kb ? b : a));
    const slowest = rows.reduce((a, b) => (b.initMs > a.initMs ? b : a));
    const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    return [
      { what: `Lambda bundles (${rows.length})`, value: `median ${median(rows.map((r) => r.kb)).toFixed(0)} KiB, largest ${largest.kb.toFixed(0)} KiB (${largest.name})` },
      { what: 'Bundle module init (median of 5 cold imports)', value: `median ${median(rows.map((r) => r.initMs)).toFixed(0)} ms, slowest ${slowest.initMs.toFixed(0)} ms (${slowest.name})` },
    ];
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

async function load(url: string, token: string, title: string, options: Partial<autocannon.Options>): Promise<Row> {
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: DURATION_SECONDS,
    ...options,
    headers: { authorization: `Bearer ${token}`, ...(options.headers ?? {}) },
  });
  const errors = result.non2xx + result.errors;
  return {
    what: title,
    value: `${result.requests.average.toFixed(0)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms${errors ? `, ${errors} errors` : ''}`,
  };
}

async function api(): Promise<Row[]> {
  const stack = await startLocalStack({ chatPort: 0, emailPort: null, workers: false });
  try {
    const demo = await seedDemo();
    const base = stack.chatUrl!;
    const auth = { authorization: `Bearer ${demo.token}`, 'content-type': 'application/x-www-form-urlencoded' };
    const conv = (await (await fetch(`${base}/v1/conversations`, { method: 'POST', headers: auth, body: `contact_id=${demo.contactIds.bob}` })).json()) as { id: string };
    for (let i = 0; i < 50; i++) {
      await fetch(`${base}/v1/messages`, { method: 'POST', headers: auth, body: `conversation_id=${conv.id}&message=seed${i}` });
    }
    return [
      await load(`${base}/v1/messages`, demo.token, 'POST /v1/messages (send)', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `conversation_id=${conv.id}&message=bench`,
      }),
      await load(`${base}/v1/messages?conversation_id=${conv.id}&limit=10`, demo.token, 'GET /v1/messages?conversation_id (10 per page)', {}),
      await load(`${base}/v1/conversations`, demo.token, 'GET /v1/conversations', {}),
    ];
  } finally {
    await stack.stop();
  }
}

/**
 * Email lists through the real queue path against the floor of raw
 * BatchWriteItem on the same DynamoDB Local (bench/email-throughput.ts).
 */
async function emailLists(): Promise<Row[]> {
  const r = await emailThroughput();
  return [
    {
      what: '10,000 addresses on 50 domains, 100 sequential adds of 100, until the list is completed',
      value: `${(r.completedSeconds / r.floorSeconds).toFixed(2)}× raw BatchWriteItem of 2 × 10,000 items (target ≤ 2.5); adds alone ${(r.addSeconds / r.floorSeconds).toFixed(2)}×; ${r.status}, ${r.emailCount} emails`,
    },
    { what: 'DNS queries for those 10,000 validations (per-domain cache)', value: `${r.dnsQueries}` },
  ];
}

const rows = [...bundles(), ...(await api()), ...(await emailLists())];
const table = [
  `Measured ${new Date().toISOString().slice(0, 10)} on ${cpus().length} cores, Node ${process.version}; API rows: local server + DynamoDB Local (in memory), ${CONNECTIONS} connections, ${DURATION_SECONDS} s each.`,
  '',
  '| what | result |',
  '|---|---|',
  ...rows.map((r) => `| ${r.what} | ${r.value} |`),
].join('\n');
console.log(table);

if (process.argv.includes('--write')) {
  const readme = readFileSync('docs/benchmarks.md', 'utf8');
  const marked = /<!-- bench:table -->[\s\S]*?<!-- \/bench:table -->|<!-- bench:table -->/;
  writeFileSync('docs/benchmarks.md', readme.replace(marked, `<!-- bench:table -->\n${table}\n<!-- /bench:table -->`));
}
process.exit(0);
