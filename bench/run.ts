/**
 * Benchmarks, run by hand with `npm run bench` (never by the tests), every
 * figure a ratio to a floor measured in the same run:
 *   - every Lambda bundle `cdk synth` produces: its size and its import time
 *     against the SDK-only floor bundle (bench/cold-start.ts);
 *   - warm latency of `GET /v1/messages` against an ideal server on the same
 *     DynamoDB Local (bench/ideal-server.ts), and throughput of the messaging
 *     API on the local server, driven by autocannon;
 *   - the email write path against raw BatchWriteItem (bench/email-throughput.ts);
 *   - what operations cost on AWS, from the capacity, invocations and requests they use here (bench/cost.ts).
 *   - the mailbox probe (SMTP_PROBE=rcpt) against its ideal on a slow loopback SMTP server (bench/mailbox-probe.ts);
 *   - users provisioned over the platform endpoints against the same writes made directly (bench/provisioning.ts).
 * Prints Markdown tables; `--write` also replaces the block between the
 * `<!-- bench:table -->` markers of whichever Markdown file holds them.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import autocannon from 'autocannon';
import { startLocalRuntime } from '../scripts/local/runtime.ts';
import { seedDemo } from '../scripts/local/seed.ts';
import { COLD_START_TARGET, RUNS, coldStarts, type ColdStartReport } from './cold-start.ts';
import { execFileSync } from 'node:child_process';
import { costTable, type CostRow } from './cost.ts';
import type { ThroughputResult } from './email-throughput.ts';
import type { MailboxProbeResult } from './mailbox-probe.ts';
import type { ProvisioningResult } from './provisioning.ts';
import type { EventFeedResult } from './event-feed.ts';
import type { FilesResult } from './files.ts';
import type { ListExportResult } from './list-export.ts';
import type { ListImportResult } from './list-import.ts';
import { startIdealServer } from './ideal-server.ts';
import { transactionFloorP50 } from './transaction-floor.ts';
import { eventLatencyRows } from './event-latency.ts';
import { realtimeLatencyRows } from './realtime-latency.ts';

process.env.LOG_LEVEL = 'silent';
const DURATION_SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = 10;

interface Row {
  what: string;
  value: string;
}

const MESSAGES_PAGE_TARGET = 1.3;

const fmtRatio = (r: { ratio: number; iqr: [number, number] }) =>
  `${r.ratio.toFixed(2)}× (IQR ${r.iqr[0].toFixed(2)}–${r.iqr[1].toFixed(2)})`;

function coldStartRows(report: ColdStartReport): Row[] {
  const worst = report.functions.reduce((a, b) => (b.ratio > a.ratio ? b : a));
  const ratios = report.functions.map((f) => f.ratio).sort((a, b) => a - b);
  const over = report.functions.filter((f) => f.ratio > COLD_START_TARGET).flatMap((f) => f.names);
  return [
    {
      what: `Cold import of the ${report.functions.length} distinct bundles, CPU time on Node ${report.nodeVersion.slice(1)} as a ratio to the SDK floor bundle (${report.floorKib.toFixed(0)} KiB)`,
      value: `worst ${worst.ratio.toFixed(2)}× (${worst.names.join(', ')}), median ${ratios[Math.floor(ratios.length / 2)]!.toFixed(2)}×; target ≤ ${COLD_START_TARGET}${over.length ? `; over: ${over.join(', ')}` : '; all within'}`,
    },
    {
      what: `\`--enable-source-maps\` on the largest bundle (${report.sourceMaps.name}), import with it over without`,
      value: fmtRatio(report.sourceMaps),
    },
    {
      what: `First request: ${report.firstRequest.name} import plus one \`GET /v1/conversations/{id}\` (authorizer context, one table read), CPU time over the floor's import plus the same \`GetItem\``,
      value: fmtRatio(report.firstRequest),
    },
  ];
}

function coldStartTable(report: ColdStartReport): string {
  return [
    '| function | KiB read at init | KiB loaded on first use | import CPU / floor |',
    '|---|---|---|---|',
    ...[...report.functions]
      .sort((a, b) => b.ratio - a.ratio)
      .map((f) => `| ${f.names.join(', ')} | ${f.kib.toFixed(0)} | ${f.lazyKib.toFixed(0)} | ${fmtRatio(f)} |`),
  ].join('\n');
}

async function load(url: string, token: string, title: string, options: Partial<autocannon.Options>): Promise<Row & { p50: number }> {
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
    p50: result.latency.p50,
  };
}

/** Items in a one-to-one send's transaction when it does not mark the sender active (test/integration/send-cost.test.ts). */
const SEND_TRANSACTION_ITEMS = 7;

async function api(): Promise<Row[]> {
  const stack = await startLocalRuntime({ messagingPort: 0, emailPort: null, workers: false, rateLimits: false });
  const ideal = await startIdealServer();
  const oneQuery = await startIdealServer({ oneQuery: true });
  try {
    const demo = await seedDemo();
    const base = stack.messagingUrl!;
    const auth = { authorization: `Bearer ${demo.token}`, 'content-type': 'application/x-www-form-urlencoded' };
    const conv = (await (
      await fetch(`${base}/v1/conversations`, { method: 'POST', headers: auth, body: `contact_id=${demo.contactIds.bob}` })
    ).json()) as { id: string };
    for (let i = 0; i < 50; i++) {
      await fetch(`${base}/v1/messages`, { method: 'POST', headers: auth, body: `conversation_id=${conv.id}&message=seed${i}` });
    }
    const page = `/v1/messages?conversation_id=${conv.id}&limit=10`;
    // A warm-up round each (not counted), then rounds alternated, so a slower minute of this shared machine weighs on both sides.
    const latency = { ideal: 0, oneQuery: 0, real: 0 };
    const urls = { ideal: ideal.url, oneQuery: oneQuery.url, real: base };
    for (let round = 0; round <= 3; round++) {
      for (const side of ['ideal', 'oneQuery', 'real'] as const) {
        const result = await autocannon({
          url: `${urls[side]}${page}`,
          connections: CONNECTIONS,
          duration: round === 0 ? 1 : DURATION_SECONDS,
          headers: { authorization: `Bearer ${demo.token}` },
        });
        if (result.non2xx + result.errors > 0) throw new Error(`${side} server answered ${result.non2xx + result.errors} errors`);
        if (round > 0) latency[side] += result.latency.average;
      }
    }
    const send = await load(`${base}/v1/messages`, demo.token, 'POST /v1/messages (send)', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `conversation_id=${conv.id}&message=bench`,
    });
    const list = await load(`${base}/v1/conversations`, demo.token, 'GET /v1/conversations', {});
    const txFloor = await transactionFloorP50(SEND_TRANSACTION_ITEMS, CONNECTIONS, DURATION_SECONDS);
    return [
      {
        what: 'GET /v1/messages?conversation_id (10 per page), warm mean latency over an ideal server (token GetItem, Query of 12, BatchGetItem of the 10 messages; same DynamoDB Local)',
        value: `${(latency.real / latency.ideal).toFixed(2)}× (target ≤ ${MESSAGES_PAGE_TARGET})`,
      },
      {
        what: 'The same page over the one-Query ideal (token GetItem, Query of 12; what a page costs when the entries carry their messages)',
        value: `${(latency.real / latency.oneQuery).toFixed(2)}× (target ≤ ${MESSAGES_PAGE_TARGET}); the two ideals: ${(latency.ideal / latency.oneQuery).toFixed(2)}×`,
      },
      send,
      list,
      {
        what: `The send's p50 over the conversation list's; the floor: a bare TransactWriteItems of ${SEND_TRANSACTION_ITEMS} items (a send's) at ${CONNECTIONS} clients at once on the same DynamoDB Local, its p50 over the list's`,
        value: `${(send.p50 / list.p50).toFixed(1)}× (target ≤ 3); the floor ${(txFloor / list.p50).toFixed(1)}× (${txFloor.toFixed(0)} ms)`,
      },
    ];
  } finally {
    await ideal.stop();
    await oneQuery.stop();
    await stack.stop();
  }
}

/**
 * Runs a bench part in its own process, so what the sections before it left
 * in this one (heap, timers) weighs on neither side; the part prints its
 * result as JSON last.
 */
function inOwnProcess<T>(script: string, ...args: string[]): T {
  const out = execFileSync(process.execPath, ['--import', 'tsx', script, ...args], {
    encoding: 'utf8',
    env: { ...process.env, LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const start = [out.indexOf('{'), out.indexOf('[')].filter((i) => i >= 0);
  return JSON.parse(out.slice(Math.min(...start))) as T;
}

/**
 * Email lists through the real queue path against the floor of raw
 * BatchWriteItem on the same DynamoDB Local (bench/email-throughput.ts).
 */
async function emailLists(): Promise<Row[]> {
  const r = inOwnProcess<ThroughputResult>('bench/email-throughput.ts');
  return [
    {
      what: '10,000 addresses on 50 domains, 100 sequential adds of 100, until the list is completed',
      value: `${(r.completedSeconds / r.floorSeconds).toFixed(2)}× raw BatchWriteItem of 2 × 10,000 items (target ≤ 1.5); adds alone ${(r.addSeconds / r.floorSeconds).toFixed(2)}×; ${r.status}, ${r.emailCount} emails`,
    },
    { what: 'DNS queries for those 10,000 validations (per-domain cache)', value: `${r.dnsQueries}` },
  ];
}

/** The app's backend signing up users over the platform endpoints (bench/provisioning.ts), against the same writes made directly. */
function provisioningRows(): Row[] {
  const r = inOwnProcess<ProvisioningResult>('bench/provisioning.ts');
  return [
    {
      what: `${r.users.toLocaleString('en-US')} users provisioned over HTTP with the secret key (\`POST /v1/contacts\` then \`POST /v1/contacts/{id}/tokens\`, 10 at once), wall time over the same writes made directly (a TransactWriteItems and a PutItem each)`,
      value: `${(r.seconds / r.floorSeconds).toFixed(2)}× (${(r.users / r.seconds).toFixed(0)} users/s, ${((2 * r.users) / r.seconds).toFixed(0)} requests/s); ${r.callsPerUser.toFixed(1)} DynamoDB calls and ${r.writeUnitsPerUser.toFixed(1)} write units per user (transactions counted once, as DynamoDB Local reports them)`,
    },
  ];
}

/** The events feeds (bench/event-feed.ts): what the feed writer consumes per message, and a reconnecting socket's replay against a bare Query loop. */
function eventFeedRows(): Row[] {
  const r = inOwnProcess<EventFeedResult>('bench/event-feed.ts');
  return [
    {
      what: `Events feeds: what the feed writer consumes per one-to-one message (${r.messages} sent over HTTP, its PutItems of event items and the Queries of the feeds' tails)`,
      value: `${r.eventsPerMessage.toFixed(1)} events appended, ${r.writeUnitsPerMessage.toFixed(1)} write units and ${r.readUnitsPerMessage.toFixed(1)} read units per message`,
    },
    {
      what: `WebSocket resume: ${r.missed.toLocaleString('en-US')} missed events replayed to a socket opened with \`?after=\`, from the upgrade to the last frame, over a bare Query loop reading the same items (100 a page, strongly consistent)`,
      value: `${(r.replaySeconds / r.querySeconds).toFixed(1)}× (${r.replaySeconds.toFixed(2)} s over ${r.querySeconds.toFixed(2)} s; each frame is one \`@connections\` POST)`,
    },
  ];
}

/** A CSV import until the list is completed (bench/list-import.ts), against raw BatchWriteItem of the same items; its memory at two sizes. */
function listImportRows(): Row[] {
  const r = inOwnProcess<ListImportResult>('bench/list-import.ts');
  return [
    {
      what: `${r.rows.toLocaleString('en-US')} CSV rows imported into a list (presigned upload, the import job, validation) until the list is completed, over raw BatchWriteItem of 2 × ${r.rows.toLocaleString('en-US')} items`,
      value: `${(r.seconds / r.floorSeconds).toFixed(2)}× (target ≤ 2.0; ${r.seconds.toFixed(1)} s over ${r.floorSeconds.toFixed(1)} s); ${r.accepted} accepted`,
    },
    {
      what: `The import's peak memory: resident set growth while ${r.smallRows.toLocaleString('en-US')} and ${r.rows.toLocaleString('en-US')} rows are imported (flat: the file is streamed)`,
      value: `${r.smallPeakGrowthMb.toFixed(0)} MB and ${r.peakGrowthMb.toFixed(0)} MB`,
    },
  ];
}

/** A list's CSV export (bench/list-export.ts) against a bare Query loop writing the same CSV in the same parts to the same local S3 server. */
function listExportRows(): Row[] {
  const r = inOwnProcess<ListExportResult>('bench/list-export.ts');
  return [
    {
      what: `A list of ${r.emails.toLocaleString('en-US')} emails exported as CSV (${(r.bytes / 1e6).toFixed(1)} MB): \`POST /api/v1/emailList/{id}/exports\` until \`GET\` shows it \`completed\` (inline, then the purge worker), over a bare Query loop (1,000 a call) writing the same CSV in the same 5 MiB parts to the same local S3 server (goal ≤ 1.5×)`,
      value: `${(r.seconds / r.floorSeconds).toFixed(2)}× (${r.seconds.toFixed(1)} s over ${r.floorSeconds.toFixed(1)} s, ${(r.rows / r.seconds).toFixed(0)} rows/s)`,
    },
  ];
}

/** A 1 MB file through the API (bench/files.ts) against a bare presigned PUT and GET on the same local S3 server. */
function filesRows(): Row[] {
  const r = inOwnProcess<FilesResult>('bench/files.ts');
  return [
    {
      what: `A ${(r.bytes / 1e6).toFixed(0)} MB file: \`POST /v1/files\`, the presigned PUT, a message attaching it, the recipient's \`GET /v1/messages/{id}\` and the download, over a bare presigned PUT and GET of the same bytes on the same local S3 server (median of ${r.rounds})`,
      value: `${(r.medianSeconds / r.floorSeconds).toFixed(2)}× (${(r.medianSeconds * 1000).toFixed(0)} ms over ${(r.floorSeconds * 1000).toFixed(0)} ms)`,
    },
  ];
}

/** The cost of operations (bench/cost.ts), in its own process like the email lists. */
function costs(): CostRow[] {
  return inOwnProcess<CostRow[]>('bench/cost.ts', '--json');
}

/** SMTP_PROBE=rcpt: 1,000 addresses over 10 domains against a loopback SMTP server answering in 50–200 ms (bench/mailbox-probe.ts). */
function mailboxProbeRows(): Row[] {
  const r = inOwnProcess<MailboxProbeResult>('bench/mailbox-probe.ts');
  return [
    {
      what: 'SMTP_PROBE=rcpt: 1,000 addresses over 10 domains (one MX host each, 2 connections per host), every answer 50–200 ms, wall time over the ideal (commands needed ÷ allowed connections × mean latency)',
      value: `${(r.wallSeconds / r.idealSeconds).toFixed(2)}× (${r.wallSeconds.toFixed(1)} s over ${r.idealSeconds.toFixed(1)} s); ${r.sessions} SMTP sessions, at most ${r.maxConcurrent} open at once; ${r.deliverable} deliverable, ${r.undeliverable} undeliverable`,
    },
  ];
}

// `--cold`, `--api`, `--cost` and `--smtp` run one part alone (while working on it), `--messaging` only the messaging API's
// page and load rows; --write needs the whole run.
const PARTS = ['cold', 'messaging', 'api', 'cost', 'smtp'] as const;
const only = PARTS.find((part) => process.argv.includes(`--${part}`));
if (only && process.argv.includes('--write'))
  throw new Error(`--write needs the whole benchmark (no ${PARTS.map((p) => `--${p}`).join(', ')})`);
const cold = only === undefined || only === 'cold' ? await coldStarts() : undefined;
const rows = [
  ...(cold ? coldStartRows(cold) : []),
  ...(only === 'messaging' ? await api() : []),
  ...(only === undefined || only === 'api'
    ? [
        ...(await api()),
        ...provisioningRows(),
        ...eventFeedRows(),
        ...filesRows(),
        ...(await emailLists()),
        ...listImportRows(),
        ...listExportRows(),
        ...eventLatencyRows(),
        ...realtimeLatencyRows(),
      ]
    : []),
  ...(only === undefined || only === 'smtp' ? mailboxProbeRows() : []),
];
const cost = only === undefined || only === 'cost' ? costs() : undefined;
const table = [
  `Measured ${new Date().toISOString().slice(0, 10)} on ${cpus().length} cores, Node ${process.version}; cold imports: median of ${RUNS} fresh processes per function on the functions' Node major${cold?.pinned ? ', one core' : ''}, each paired with the floor; API rows: local server + DynamoDB Local (in memory), ${CONNECTIONS} connections, ${DURATION_SECONDS} s each.`,
  '',
  '| what | result |',
  '|---|---|',
  ...rows.map((r) => `| ${r.what} | ${r.value} |`),
  ...(cold ? ['', coldStartTable(cold)] : []),
  ...(cost ? ['', costTable(cost)] : []),
].join('\n');
console.log(table);

/** The Markdown file holding the `<!-- bench:table -->` block, wherever the docs keep it. */
function tableFile(): string {
  const candidates = [
    'README.md',
    ...readdirSync('docs')
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  const found = candidates.find((f) => readFileSync(f, 'utf8').includes('<!-- bench:table -->'));
  if (!found) throw new Error('no Markdown file has a <!-- bench:table --> marker');
  return found;
}

if (process.argv.includes('--write')) {
  const file = tableFile();
  const text = readFileSync(file, 'utf8');
  const marked = /<!-- bench:table -->[\s\S]*?<!-- \/bench:table -->|<!-- bench:table -->/;
  writeFileSync(file, text.replace(marked, `<!-- bench:table -->\n${table}\n<!-- /bench:table -->`));
  console.log(`\nwritten to ${file}`);
}
process.exit(0);
