import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { createEmailList, deleteEmailList } from '#shared/data/email-lists';
import { exportParts, getExport, type ExportRecord } from '#shared/data/exports';
import { transactNamed } from '#shared/db/batch';
import { csvHeader } from '#shared/email/csv';
import { exportObjectKey, listExport } from '#shared/email/export-job';
import { createExport } from '#shared/email/exports';
import { deleteList } from '#shared/email/list-delete';
import { PART_MIN_BYTES, uploadPart } from '#shared/files/object-parts';
import { downloadUrl, objectSize } from '#shared/files/storage';
import { newJob } from '#shared/jobs/run';
import { purgeList } from '#shared/purge/list';
import { listEmailKeys } from '#shared/data/email-deletes';
import { newId } from '#shared/util/ids';
import { startWorkers } from '../../scripts/local/runtime.ts';
import { eventually } from '../steps/eventually.ts';
import { aTenant } from '../steps/given.ts';
import { seededAddress, seedListEmails } from '../steps/list-emails.ts';

/**
 * A list larger than one part (S3's 5 MiB): written as a multipart upload,
 * a part per step, each recorded on the export; a run that dies after
 * sending a part but before recording it leaves nothing the next run does
 * not replace, and the file ends with every email exactly once, in order.
 */
const EMAILS = 32_000; // about 5.8 MB of CSV: two parts

async function anExport(accountId: string, listId: number, deliverability: ExportRecord['deliverability'] = null): Promise<ExportRecord> {
  const record: ExportRecord = {
    id: newId('exp'),
    account_id: accountId,
    list_id: listId,
    deliverability,
    status: 'processing',
    row_count: 0,
    created_at: Math.floor(Date.now() / 1000),
    completed_at: null,
    upload_id: null,
    etags: [],
    after_seq: -1,
    read_done: false,
  };
  expect(await transactNamed(exportParts(record))).toEqual([]);
  return record;
}

/** A list of `emails` seeded emails (sequence numbers from `seedBase`) with one export of it written to storage. */
async function aListWithAnExportWritten(name: string, emails: number, seedBase: number) {
  const t = await aTenant();
  const list = await createEmailList(t.accountId, { name });
  await seedListEmails(t.accountId, list.id, emails, seedBase);
  const written = await anExport(t.accountId, list.id);
  while (!(await listExport.step(newJob(listExport, t.accountId, { listId: list.id, exportId: written.id }), Date.now() + 60_000)).done);
  return { t, list, written };
}

describe('a list export in parts against DynamoDB Local and the local S3 server', () => {
  it('writes a large list as a multipart upload and survives a run that died between sending a part and recording it', async () => {
    // Given a list of 32,000 emails and its export, not yet started
    const t = await aTenant();
    const list = await createEmailList(t.accountId, { name: 'large' });
    await seedListEmails(t.accountId, list.id, EMAILS, 7_000_000_000_000);
    const record = await anExport(t.accountId, list.id);
    const job = newJob(listExport, t.accountId, { listId: list.id, exportId: record.id });
    const far = () => Date.now() + 60_000;

    // When one step runs: then it sends and records the first part, at least 5 MiB, and stops there
    expect(await listExport.step(job, far())).toEqual({ done: false, cursor: 1 });
    const afterOne = (await getExport(record))!;
    expect(afterOne).toMatchObject({ status: 'processing', etags: [expect.any(String)], read_done: false });
    expect(afterOne.upload_id).toEqual(expect.any(String));
    expect(afterOne.row_count).toBeGreaterThan(0);
    expect(afterOne.after_seq).toBe(afterOne.row_count - 1);

    // And given a run that then sent a part 2 (here: a wrong one) and died before recording it
    await uploadPart(exportObjectKey(t.accountId, record.id), afterOne.upload_id!, 2, Buffer.alloc(PART_MIN_BYTES, 'x'));

    // When the job runs again until done
    let steps = 0;
    while (!(await listExport.step(job, far())).done) steps++;

    // Then the export is completed with every row, the resent part 2 replaced the dead run's
    const done = (await getExport(record))!;
    expect(steps).toBe(0);
    expect(done).toMatchObject({ status: 'completed', row_count: EMAILS, etags: [expect.any(String), expect.any(String)] });
    const text = await (await fetch(await downloadUrl(exportObjectKey(t.accountId, record.id), 'x.csv', 60))).text();
    expect(text.startsWith(csvHeader)).toBe(true);
    expect(text).not.toContain('xxxx');
    const rows = parse(text, { from_line: 2 }) as string[][];
    expect(rows.map((row) => row[0])).toEqual(Array.from({ length: EMAILS }, (_, i) => seededAddress(i)));

    // And a step run once more (a duplicate queue message) changes nothing
    expect(await listExport.step(job, far())).toEqual({ done: true });
    expect((await getExport(record))!.row_count).toBe(EMAILS);
    // Seeding 32,000 emails into DynamoDB Local takes most of it.
  }, 180_000);

  it('filters by deliverability, and a step out of time keeps no half part', async () => {
    // Given a list exported for its risky emails only (every fourth)
    const t = await aTenant();
    const list = await createEmailList(t.accountId, { name: 'filtered' });
    await seedListEmails(t.accountId, list.id, 8_000, 7_100_000_000_000);
    const record = await anExport(t.accountId, list.id, ['risky']);
    const job = newJob(listExport, t.accountId, { listId: list.id, exportId: record.id });

    // When a step's deadline passed long ago: then it sends nothing, records nothing, and says so
    expect(await listExport.step(job, Date.now() - 60_000)).toEqual({ done: false });
    expect((await getExport(record))!).toMatchObject({ etags: [], after_seq: -1, row_count: 0 });

    // When it runs with time: then the file holds exactly the risky emails, in order
    while (!(await listExport.step(job, Date.now() + 60_000)).done);
    expect((await getExport(record))!).toMatchObject({ status: 'completed', row_count: 2_000 });
    const text = await (await fetch(await downloadUrl(exportObjectKey(t.accountId, record.id), 'x.csv', 60))).text();
    const rows = parse(text, { from_line: 2 }) as string[][];
    expect(rows.map((row) => row[0])).toEqual(Array.from({ length: 2_000 }, (_, k) => seededAddress(4 * k + 2)));
    expect(new Set(rows.map((row) => row[3]))).toEqual(new Set(['risky']));
  }, 60_000);

  it("deletes a list's export files with the list, and an export of a deleted list writes none", async () => {
    // Given a list with one export written and another not started yet
    const { t, list, written } = await aListWithAnExportWritten('deleted with its exports', 20, 7_150_000_000_000);
    expect(await objectSize(exportObjectKey(t.accountId, written.id))).toBeGreaterThan(csvHeader.length);
    const waiting = await anExport(t.accountId, list.id);

    // When the list is deleted (its purge runs inline: a small list)
    await deleteList({ accountId: t.accountId }, list.id, Date.now() + 5_000);

    // Then the written export's file and record are gone
    expect(await objectSize(exportObjectKey(t.accountId, written.id))).toBeUndefined();
    expect(await getExport(written)).toBeUndefined();
    // And the export not started, run now, ends without writing a file
    expect(await listExport.step(newJob(listExport, t.accountId, { listId: list.id, exportId: waiting.id }), Date.now() + 60_000)).toEqual({
      done: true,
    });
    expect(await objectSize(exportObjectKey(t.accountId, waiting.id))).toBeUndefined();
  }, 60_000);

  it("deletes a deleted list's export files in the purge's first pass, before its emails: no download outlives the list by a pass", async () => {
    // Given a list of 300 emails with one export written, deleted and not purged yet
    const { t, list, written } = await aListWithAnExportWritten('purged exports first', 300, 7_160_000_000_000);
    expect(await deleteEmailList(t.accountId, list.id, [])).toBe(true);
    expect(await objectSize(exportObjectKey(t.accountId, written.id))).toBeGreaterThan(0);
    // When its purge makes one pass
    await purgeList.step(newJob(purgeList, t.accountId, { listId: list.id }), Date.now() + 60_000);
    // Then the export's file and record are gone, while emails are left for the next passes
    expect(await objectSize(exportObjectKey(t.accountId, written.id))).toBeUndefined();
    expect(await getExport(written)).toBeUndefined();
    expect((await listEmailKeys(t.accountId, list.id, 10)).length).toBeGreaterThan(0);
  }, 60_000);
});

describe('an export its request had no time for', () => {
  // The purge worker polls the purge queue for this describe, as Lambda's event source mapping would.
  let workers: ReturnType<typeof startWorkers>;
  beforeAll(() => {
    workers = startWorkers(process.env as Record<string, string>, { waitSeconds: 1 });
  });
  afterAll(() => workers.stop());

  it('is written by the purge worker from the queue', async () => {
    // Given a list of 3,000 emails
    const t = await aTenant();
    const list = await createEmailList(t.accountId, { name: 'queued' });
    await seedListEmails(t.accountId, list.id, 3_000, 7_200_000_000_000);
    // When its export is created with the inline deadline long past (the inline step gives up, the job is queued)
    const created = await createExport(
      { accountId: t.accountId },
      list.id,
      { deliverability: ['deliverable', 'unknown'] },
      Date.now() - 60_000,
    );
    expect(created).toMatchObject({ status: 'processing', row_count: 0, download_url: null });
    // Then the worker completes it with the matching half of the list
    const ref = { account_id: t.accountId, list_id: list.id, id: created.id };
    await eventually(async () => (await getExport(ref))?.status === 'completed', { what: `export ${created.id} completed` });
    expect((await getExport(ref))!.row_count).toBe(1_500);
  }, 60_000);
});
