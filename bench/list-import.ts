/**
 * A CSV import into an email list under `npm start`'s runtime, until the
 * list is `completed` (every row judged and stored by the import job on the
 * purge queue's worker, then validated by the validation worker against a
 * loopback DNS server), against the floor of raw BatchWriteItem of the same
 * items (an email and its address guard per row, 25 per call) on the same
 * DynamoDB Local. The import's peak memory (resident set growth over the
 * process's before the import, sampled every 50 ms) is measured at
 * SMALL_ROWS and ROWS rows, in the same process: it should not grow with
 * the file. Run alone with `npx tsx bench/list-import.ts` (one JSON line);
 * `npm run bench` includes it.
 */
import { batchWriteFloorSeconds, withEmailStack } from './list-floor.ts';

process.env.LOG_LEVEL ??= 'silent';
const ROWS = Number(process.env.BENCH_IMPORT_ROWS ?? 100_000);
const SMALL_ROWS = Math.min(10_000, ROWS);
const DOMAINS = 50;

export interface ListImportResult {
  rows: number;
  smallRows: number;
  seconds: number;
  floorSeconds: number;
  accepted: number;
  peakGrowthMb: number;
  smallPeakGrowthMb: number;
}

/** The resident set's largest growth over its size now, while `run` runs. */
async function peakGrowth<T>(run: () => Promise<T>): Promise<{ result: T; mb: number }> {
  global.gc?.();
  const before = process.memoryUsage().rss;
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
  try {
    const result = await run();
    return { result, mb: (peak - before) / 1e6 };
  } finally {
    clearInterval(timer);
  }
}

export async function listImport(): Promise<ListImportResult> {
  const domains = Array.from({ length: DOMAINS }, (_, i) => `d${i}.bench`);
  return withEmailStack(domains, async ({ base, headers, untilCompleted }) => {
    const json = async (path: string, init?: RequestInit) => {
      const res = await fetch(`${base}${path}`, { headers, ...init });
      if (!res.ok) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
      return res.json() as Promise<Record<string, unknown>>;
    };
    /** Creates a list, imports `rows` addresses into it, and waits for the list to be completed. */
    const importRows = async (rows: number, prefix: string) => {
      const csv = `name,email\n${Array.from({ length: rows }, (_, i) => `"Row, ${i}",${prefix}${i}@${domains[i % DOMAINS]}`).join('\n')}\n`;
      const list = await json('/api/v1/emailList', { method: 'POST', body: JSON.stringify({ name: prefix }) });
      const created = await json(`/api/v1/emailList/${list.id}/imports`, { method: 'POST', body: '{}' });
      const upload = created.upload as { url: string; headers: Record<string, string> };
      const started = performance.now();
      const put = await fetch(upload.url, { method: 'PUT', headers: upload.headers, body: csv });
      if (!put.ok) throw new Error(`upload answered ${put.status}`);
      const { result, mb } = await peakGrowth(async () => {
        let shown: Record<string, unknown> = {};
        for (const until = performance.now() + 3_600_000; shown.status !== 'completed' && performance.now() < until;) {
          // Each GET also starts a waiting import at once, as a polling client does.
          shown = await json(`/api/v1/emailList/${list.id}/imports/${created.id}`);
          if (shown.status === 'error') throw new Error(`import failed: ${JSON.stringify(shown.error)}`);
          if (shown.status !== 'completed') await new Promise((r) => setTimeout(r, 200));
        }
        const validated = await untilCompleted(Number(list.id), 3_600_000);
        if (shown.status !== 'completed' || validated.status !== 'completed')
          throw new Error(`import ${shown.status}, list ${validated.status}`);
        return shown;
      });
      return { seconds: (performance.now() - started) / 1000, accepted: Number(result.accepted_count), mb };
    };
    // DynamoDB Local's JVM is several times slower until warm: warm both paths, then time the floor on either side.
    await batchWriteFloorSeconds(1_000, DOMAINS);
    await importRows(500, 'warm');
    const small = await importRows(SMALL_ROWS, 'small');
    const floorBefore = await batchWriteFloorSeconds(ROWS, DOMAINS);
    const large = await importRows(ROWS, 'user');
    const floor = (floorBefore + (await batchWriteFloorSeconds(ROWS, DOMAINS))) / 2;
    return {
      rows: ROWS,
      smallRows: SMALL_ROWS,
      seconds: large.seconds,
      floorSeconds: floor,
      accepted: large.accepted,
      peakGrowthMb: large.mb,
      smallPeakGrowthMb: small.mb,
    };
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await listImport()));
  process.exit(0);
}
