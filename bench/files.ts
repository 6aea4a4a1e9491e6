/**
 * A 1 MB file under `npm start`'s runtime: created, uploaded, attached to a
 * message and downloaded by the recipient (POST /v1/files, the presigned PUT,
 * POST /v1/messages with its file_id, GET /v1/messages/{id}, the presigned
 * GET), against the floor of a bare presigned PUT and GET of the same bytes
 * on the same local S3 server. Median of ROUNDS, each pair run back to back.
 * Run alone with `npx tsx bench/files.ts` (one JSON line); `npm run bench` includes it.
 */
import { randomBytes } from 'node:crypto';
import { downloadUrl, uploadUrl } from '#shared/files/storage';
import { startLocalRuntime } from '../scripts/local/runtime.ts';
import { seedDemo } from '../scripts/local/seed.ts';

process.env.LOG_LEVEL ??= 'silent';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const BYTES = 1_000_000;

export interface FilesResult {
  rounds: number;
  bytes: number;
  medianSeconds: number;
  floorSeconds: number;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function timed(run: () => Promise<void>): Promise<number> {
  const start = process.hrtime.bigint();
  await run();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

async function ok(response: Promise<Response>): Promise<Response> {
  const r = await response;
  if (!r.ok) throw new Error(`${r.url} answered ${r.status}: ${await r.text()}`);
  return r;
}

export async function files(): Promise<FilesResult> {
  const stack = await startLocalRuntime({ messagingPort: 0, emailPort: null, rateLimits: false });
  try {
    const demo = await seedDemo();
    const as = (token: string) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' });
    const base = stack.messagingUrl!;
    const conv = (await (
      await ok(
        fetch(`${base}/v1/conversations`, {
          method: 'POST',
          headers: as(demo.token),
          body: JSON.stringify({ contact_id: demo.contactIds.bob }),
        }),
      )
    ).json()) as { id: string };
    const bytes = randomBytes(BYTES);

    const throughTheApi = async () => {
      const file = (await (
        await ok(
          fetch(`${base}/v1/files`, {
            method: 'POST',
            headers: as(demo.token),
            body: JSON.stringify({ name: 'photo.jpg', content_type: 'image/jpeg', size: BYTES }),
          }),
        )
      ).json()) as { id: string; upload: { url: string; headers: Record<string, string> } };
      await ok(fetch(file.upload.url, { method: 'PUT', headers: file.upload.headers, body: bytes }));
      const sent = (await (
        await ok(
          fetch(`${base}/v1/messages`, {
            method: 'POST',
            headers: as(demo.token),
            body: JSON.stringify({ conversation_id: conv.id, message: 'photo', attachments: [{ file_id: file.id }] }),
          }),
        )
      ).json()) as { id: string };
      const read = (await (await ok(fetch(`${base}/v1/messages/${sent.id}`, { headers: as(demo.token2) }))).json()) as {
        attachments: { url: string }[];
      };
      const got = await (await ok(fetch(read.attachments[0]!.url))).arrayBuffer();
      if (got.byteLength !== BYTES) throw new Error(`downloaded ${got.byteLength} bytes`);
    };
    let n = 0;
    const bare = async () => {
      const key = `bench/${process.pid}/${n++}`;
      const put = await uploadUrl(key, 'image/jpeg', BYTES, 3600);
      await ok(fetch(put.url, { method: 'PUT', headers: put.headers, body: bytes }));
      const got = await (await ok(fetch(await downloadUrl(key, 'photo.jpg', 3600)))).arrayBuffer();
      if (got.byteLength !== BYTES) throw new Error(`downloaded ${got.byteLength} bytes`);
    };
    // Warm (not counted): loads every module on the way and opens the connections.
    await throughTheApi();
    await bare();
    const api: number[] = [];
    const floor: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      api.push(await timed(throughTheApi));
      floor.push(await timed(bare));
    }
    return { rounds: ROUNDS, bytes: BYTES, medianSeconds: median(api), floorSeconds: median(floor) };
  } finally {
    await stack.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await files()));
  process.exit(0);
}
