import * as v from 'valibot';
import { getExport, getListExport, recordPart, recordUpload, markCompleted, type ExportRecord } from '#shared/data/exports';
import { listMembersAfter } from '#shared/data/emails';
import { csvHeader, csvRow } from '#shared/email/csv';
import { presentEmail } from '#shared/email/present';
import { completeUpload, PART_MIN_BYTES, putObject, startUpload, uploadPart } from '#shared/files/object-parts';
import { deleteObject, objectSize } from '#shared/files/storage';
import type { Job, JobKind, Step } from '#shared/jobs/kind';
import { nowSeconds } from '#shared/util/ids';

/** Where an export's CSV is: under `exports/`, which the bucket's lifecycle rule expires (EXPORT_RETENTION_DAYS). */
export const exportObjectKey = (accountId: string, exportId: string) => `exports/${accountId}/${exportId}.csv`;

export const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8';

/** Members per Query: about what fits DynamoDB's 1 MB a response. */
const MEMBERS_PER_READ = 1_000;
/**
 * How far past its deadline a step may go to finish its part: the deadline
 * says when no new step should start (runJob), and dropping a part nearly
 * read would throw its reads away. Less than what the worker keeps for
 * queueing the rest (shared/jobs/worker.ts), and far inside the create's
 * Lambda timeout after its inline deadline.
 */
const OVERRUN_MS = 4_000;

interface Payload {
  listId: number;
  exportId: string;
}

/**
 * Writes a list's CSV export. Each step reads the list from where the
 * record says the parts end, a Query of members at a time, until it holds
 * one part's worth of CSV (PART_MIN_BYTES) or the list ends, then sends
 * it and records it: at most one part in memory, whatever the list's size.
 * A list that fits in one part is one PUT; a longer one a multipart
 * upload, completed once the list is read. A step still short of a full
 * part OVERRUN_MS past its deadline drops it and the next step reads it
 * again: a part is a few seconds of reading, well within a worker's run,
 * so a large list always moves on and never starts over.
 */
export const listExport: JobKind<Payload> = {
  name: 'list-export',
  payload: /* @__PURE__ */ (() => v.object({ listId: v.pipe(v.number(), v.safeInteger()), exportId: v.string() }))(),
  subject: (p) => `EXPORT#${p.exportId}`,
  step: (job, deadline) => exportStep(job, deadline),
};

async function exportStep(job: Job<Payload>, deadline: number): Promise<Step> {
  // A deleted list's export stops: the list's purge deletes its record and whatever file it has.
  const record = await getListExport({ account_id: job.accountId, list_id: job.payload.listId, id: job.payload.exportId });
  if (!record || record.status === 'completed') return { done: true };
  const key = exportObjectKey(record.account_id, record.id);
  const wanted = record.deliverability && new Set<string>(record.deliverability);
  const chunks: string[] = record.etags.length === 0 ? [csvHeader] : [];
  let bytes = Buffer.byteLength(chunks.join(''));
  let rows = 0;
  let after = record.after_seq;
  let ended = record.read_done;
  while (!ended && bytes < PART_MIN_BYTES) {
    const members = await listMembersAfter(record.account_id, record.list_id, after, MEMBERS_PER_READ);
    if (members.length === 0) ended = true;
    for (const email of members) {
      after = email.seq;
      const shown = presentEmail(email);
      if (wanted && !wanted.has(shown.deliverability)) continue;
      const line = csvRow(shown);
      chunks.push(line);
      bytes += Buffer.byteLength(line);
      rows++;
      // The rest of this read is read again by the next part: a part ends exactly after its last member.
      if (bytes >= PART_MIN_BYTES) break;
    }
    if (!ended && bytes < PART_MIN_BYTES && Date.now() > deadline + OVERRUN_MS) return { done: false };
  }
  const body = Buffer.from(chunks.join(''));
  try {
    if (!ended) {
      // A full part, and more of the list to come.
      const etag = await uploadPart(key, await openUpload(record, key), record.etags.length + 1, body);
      if (!(await recordPart(record, etag, after, rows, false))) return { done: false };
      return { done: false, cursor: record.etags.length + 1 };
    }
    if (record.upload_id === null && record.etags.length === 0) {
      await putObject(key, body, CSV_CONTENT_TYPE);
    } else {
      const etags = [...record.etags];
      if (body.length > 0) {
        const uploadId = await openUpload(record, key);
        const etag = await uploadPart(key, uploadId, etags.length + 1, body);
        if (!(await recordPart(record, etag, after, rows, true))) return { done: false };
        etags.push(etag);
      }
      await completeUpload(key, record.upload_id ?? (await openUpload(record, key)), etags);
    }
  } catch (error) {
    // An upload completed by a run that died before recording it: the object is there, only the record is behind.
    if (!(record.upload_id !== null && (await objectSize(key)) !== undefined)) throw error;
    await completed(record, key, record.row_count);
    return { done: true };
  }
  await completed(record, key, record.row_count + rows);
  return { done: true, cursor: record.etags.length + 2 };
}

/**
 * Marks the export completed, its file written. A record deleted meanwhile
 * (its list's purge passed while this step wrote) leaves a file no purge
 * will find again: it is deleted here.
 */
async function completed(record: ExportRecord, key: string, rowCount: number): Promise<void> {
  if (await markCompleted(record, rowCount, nowSeconds())) return;
  if (!(await getExport(record))) await deleteObject(key);
}

/** The export's multipart upload: the recorded one, or a new one recorded now (another run's, if it recorded first). */
async function openUpload(record: ExportRecord, key: string): Promise<string> {
  if (record.upload_id !== null) return record.upload_id;
  const uploadId = await startUpload(key, CSV_CONTENT_TYPE);
  if (await recordUpload(record, uploadId)) {
    record.upload_id = uploadId;
    return uploadId;
  }
  // Ours is left incomplete: the bucket's lifecycle rule aborts it.
  const current = await getExport(record);
  if (!current?.upload_id) throw new Error(`export ${record.id} lost its upload`);
  record.upload_id = current.upload_id;
  return current.upload_id;
}
