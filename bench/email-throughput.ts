/**
 * The email write path against its floor, in one run on one DynamoDB Local:
 *   - floor: raw BatchWriteItem of 2 × ADDRESSES items (an email and its
 *     address guard each) shaped like the stored emails, 25 per call, one call at a time;
 *   - measured: ADDRESSES addresses over DOMAINS domains added to one list in
 *     sequential requests of 100 through the local HTTP server, then
 *     validated by the queue worker against a loopback DNS server, until the
 *     list is `completed`.
 */
import { batchWriteFloorSeconds, withEmailStack } from './list-floor.ts';

const ADDRESSES = Number(process.env.BENCH_ADDRESSES ?? 10_000);
const DOMAINS = 50;
const PER_REQUEST = 100;

/** Adds `requests` × PER_REQUEST addresses to a new list, one request after another; returns the list's id. */
async function addAll(base: string, headers: Record<string, string>, requests: number, prefix: string): Promise<number> {
  const domains = Array.from({ length: DOMAINS }, (_, i) => `d${i}.bench`);
  const list = (await (
    await fetch(`${base}/api/v1/emailList`, { method: 'POST', headers, body: JSON.stringify({ name: prefix }) })
  ).json()) as { id: number };
  for (let r = 0; r < requests; r++) {
    const emails = Array.from({ length: PER_REQUEST }, (_, i) => `${prefix}${r * PER_REQUEST + i}@${domains[i % DOMAINS]}`);
    const res = await fetch(`${base}/api/v1/emailList/${list.id}/emails`, { method: 'POST', headers, body: JSON.stringify({ emails }) });
    if (res.status !== 201) throw new Error(`add answered ${res.status}: ${await res.text()}`);
  }
  return list.id;
}

export interface ThroughputResult {
  floorSeconds: number;
  addSeconds: number;
  completedSeconds: number;
  status: string;
  emailCount: number;
  dnsQueries: number;
}

export async function emailThroughput(): Promise<ThroughputResult> {
  const domains = Array.from({ length: DOMAINS }, (_, i) => `d${i}.bench`);
  return withEmailStack(domains, async ({ base, headers, dns, untilCompleted }) => {
    // DynamoDB Local's JVM is several times slower until warm: warm both paths up, then time the floor on either side of the path.
    const completed = (list: number) => untilCompleted(list, 600_000);
    await batchWriteFloorSeconds(1_000, DOMAINS);
    await completed(await addAll(base, headers, 10, 'warm'));
    const floorBefore = await batchWriteFloorSeconds(ADDRESSES, DOMAINS);
    const started = performance.now();
    const list = await addAll(base, headers, ADDRESSES / PER_REQUEST, 'user');
    const added = performance.now() - started;
    const current = await completed(list);
    const total = performance.now() - started;
    const floor = (floorBefore + (await batchWriteFloorSeconds(ADDRESSES, DOMAINS))) / 2;
    return {
      floorSeconds: floor,
      addSeconds: added / 1000,
      completedSeconds: total / 1000,
      status: current.status,
      emailCount: current.email_count,
      dnsQueries: dns.queries().length,
    };
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.env.LOG_LEVEL ??= 'silent';
  const r = await emailThroughput();
  console.log(JSON.stringify({ ...r, ratio: r.completedSeconds / r.floorSeconds }, null, 2));
  process.exit(0);
}
