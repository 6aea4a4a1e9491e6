/**
 * A CSV export of a list of 100,000 emails under `npm start`'s runtime:
 * `POST /api/v1/emailList/{id}/exports`, then `GET` of the export until it
 * is `completed` (the inline run, then the purge queue's worker), against
 * the floor of a bare Query loop over the same members index writing the
 * same CSV to the same local S3 server in the same 5 MiB parts. The emails
 * are seeded directly in bulk (completed, with a result): the bench is the
 * export, not the validation. Run alone with `npx tsx bench/list-export.ts`
 * (one JSON line); `npm run bench` includes it.
 */
import { QueryCommand, type QueryCommandOutput } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#shared/db/client';
import { keys } from '#shared/db/keys';
import { createEmailList } from '#shared/data/email-lists';
import type { EmailRecord } from '#shared/data/emails';
import { csvHeader, csvRow } from '#shared/email/csv';
import { presentEmail } from '#shared/email/present';
import { completeUpload, PART_MIN_BYTES, startUpload, uploadPart } from '#shared/files/object-parts';
import { startLocalRuntime } from '../scripts/local/runtime.ts';
import { seedDemo } from '../scripts/local/seed.ts';
import { seedListEmails } from '../test/steps/list-emails.ts';

process.env.LOG_LEVEL ??= 'silent';
const EMAILS = Number(process.env.BENCH_EXPORT_EMAILS ?? 100_000);

export interface ListExportResult {
  emails: number;
  rows: number;
  bytes: number;
  seconds: number;
  floorSeconds: number;
}

async function timed<T>(run: () => Promise<T>): Promise<[number, T]> {
  const start = process.hrtime.bigint();
  const out = await run();
  return [Number(process.hrtime.bigint() - start) / 1e9, out];
}

/** The floor: the same Query (1,000 a call, in order), the same rows, the same parts to the same storage. */
async function bareExport(accountId: string, listId: number): Promise<{ rows: number; bytes: number }> {
  const key = `bench/${process.pid}/floor.csv`;
  const uploadId = await startUpload(key, 'text/csv');
  const etags: string[] = [];
  let chunks = [csvHeader];
  let size = csvHeader.length;
  let rows = 0;
  let bytes = 0;
  const flush = async () => {
    const body = Buffer.from(chunks.join(''));
    bytes += body.length;
    etags.push(await uploadPart(key, uploadId, etags.length + 1, body));
    chunks = [];
    size = 0;
  };
  let startKey: Record<string, unknown> | undefined;
  const partition = keys.members.partition({ collection: keys.list.key({ acct: accountId, list: listId }).pk });
  do {
    const out: QueryCommandOutput = await db().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: keys.members.index,
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': partition },
        Limit: 1000,
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of out.Items ?? []) {
      const line = csvRow(presentEmail(item as unknown as EmailRecord));
      chunks.push(line);
      size += line.length;
      rows++;
      if (size >= PART_MIN_BYTES) await flush();
    }
    startKey = out.LastEvaluatedKey;
  } while (startKey);
  if (size > 0) await flush();
  await completeUpload(key, uploadId, etags);
  return { rows, bytes };
}

export async function listExport(): Promise<ListExportResult> {
  const stack = await startLocalRuntime({ messagingPort: null, emailPort: 0, rateLimits: false });
  try {
    const demo = await seedDemo();
    const base = stack.emailUrl!;
    const headers = { authorization: `Bearer ${demo.secretKey}`, 'content-type': 'application/json' };
    const list = await createEmailList(demo.accountId, { name: 'bench export' });
    await seedListEmails(demo.accountId, list.id, EMAILS, 8_000_000_000_000);

    const throughTheApi = async () => {
      const created = await fetch(`${base}/api/v1/emailList/${list.id}/exports`, { method: 'POST', headers, body: '{}' });
      if (created.status !== 201) throw new Error(`export answered ${created.status}: ${await created.text()}`);
      const { id } = (await created.json()) as { id: string };
      for (;;) {
        const shown = (await (await fetch(`${base}/api/v1/emailList/${list.id}/exports/${id}`, { headers })).json()) as {
          status: string;
          row_count: number;
          download_url: string | null;
        };
        if (shown.status === 'completed') return { rows: shown.row_count, url: shown.download_url! };
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    // A first pass of the floor (not counted) warms DynamoDB Local's pages of the index for both.
    await bareExport(demo.accountId, list.id);
    const [floorSeconds, floor] = await timed(() => bareExport(demo.accountId, list.id));
    const [seconds, api] = await timed(throughTheApi);
    // Downloaded after the clock stopped: the export is done when its download is there.
    const bytes = (await (await fetch(api.url)).arrayBuffer()).byteLength;
    if (api.rows !== floor.rows || bytes !== floor.bytes) {
      throw new Error(`the export wrote ${api.rows} rows, ${bytes} bytes; the floor ${floor.rows}, ${floor.bytes}`);
    }
    return { emails: EMAILS, rows: api.rows, bytes, seconds, floorSeconds };
  } finally {
    await stack.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await listExport()));
  process.exit(0);
}
