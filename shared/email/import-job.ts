import { claimIdempotencyKey, completeIdempotencyKey, interruptIdempotencyKey, type Hold } from '#shared/data/idempotency';
import {
  advanceImport,
  completeImport,
  failImport,
  getImport,
  markImporting,
  recordInspection,
  type ImportRecord,
} from '#shared/data/imports';
import { DomainError } from '#shared/errors';
import { addToList } from '#shared/email/add-to-list';
import { endListRounds } from '#shared/email/list-rounds';
import { csvRows, ImportFileError, inspectCsv, MAX_IMPORT_BYTES, StorageReadError } from '#shared/email/import-csv';
import { importObjectKey, UPLOAD_POLL_MS, type ImportPayload } from '#shared/email/imports';
import { readObject } from '#shared/files/object-reads';
import { deleteObject, objectSize } from '#shared/files/storage';
import type { Job, Step } from '#shared/jobs/kind';
import { nowSeconds } from '#shared/util/ids';
import { describeError, logger } from '#shared/util/logger';

/**
 * The `list-import` job: waits for the upload, judges the whole file
 * (first pass), then adds its rows to the list a chunk at a time (second
 * pass). Each chunk goes through `addToList` under an idempotency hold of
 * its own (key: the import and the chunk's first row), so a chunk whose
 * run died half-way is continued, not added again; its counts are kept in
 * the hold's answer and added to the import's with its progress in one
 * conditional write. A run out of time stops between chunks; the next
 * reads on from the byte the next row starts at (an HTTP range read).
 */

/**
 * Rows per `addToList` call. An add's own work (the account read, the
 * sequence reservation, the counts, the outbox's move to the due index, the
 * chunk's hold and the import's progress) is the same for 100 rows or 500,
 * so fewer, larger chunks make fewer calls: 10,000 rows imported in 1.84×
 * the floor's time instead of 2.64× (`bench/list-import.ts`, same run of
 * the floor). A chunk's rows are one list add of several transactions
 * (`storeEmails`), stored in a second or two; 1,000 gained nothing more.
 */
export const CHUNK_ROWS = 500;
/** A PUT that began just before its URL expired may still be arriving. */
const UPLOAD_GRACE_SECONDS = 5 * 60;
/**
 * How long a run holds a chunk before another may take it over: a chunk is
 * stored in a second or two (locally; less on AWS), and only one chain runs the job
 * at a time (its lease), so the hold matters when a run died with the chunk
 * half stored. Its end is when the next run may continue the chunk. Taken
 * over early, a slow run stops at its next write (the hold's token).
 */
const CHUNK_LEASE_SECONDS = 15;
/** When a chunk that another run holds is tried again, at the latest (the hold's lease unknown). */
const HELD_CHUNK_RETRY_MS = 30_000;

interface Counts {
  accepted: number;
  rejected: number;
}

const chunkKey = (importId: string, fromRow: number) => `import\n${importId}\n${fromRow}`;

/** A run's hold on a chunk: the idempotency key of the import's rows from `fromRow`. */
export const claimChunk = (r: ImportRecord, fromRow: number, addresses: string[], leaseSeconds = CHUNK_LEASE_SECONDS) =>
  claimIdempotencyKey(r.account_id, chunkKey(r.id, fromRow), `${r.etag}\n${addresses.length}`, leaseSeconds);

/** One chunk added to the list, exactly once; when another run holds it now, the time (epoch ms) to try again. */
export async function addChunk(r: ImportRecord, fromRow: number, addresses: string[]): Promise<Counts | { heldUntilMs: number }> {
  const claim = await claimChunk(r, fromRow, addresses);
  if (claim.kind === 'replay') return JSON.parse(claim.response.body) as Counts;
  if (claim.kind === 'in_progress') {
    // The lease holds through its last second; unknown (a claim that kept meeting others), the longest wait.
    const leaseEndMs = claim.leaseUntil ? (claim.leaseUntil + 1) * 1000 : Infinity;
    return { heldUntilMs: Math.min(Math.max(leaseEndMs, Date.now() + 1000), Date.now() + HELD_CHUNK_RETRY_MS) };
  }
  if (claim.kind === 'mismatch') throw new Error(`chunk ${fromRow} of ${r.id} was run over other rows`);
  const hold: Hold = claim.hold;
  let counts: Counts;
  try {
    const { entries } = await addToList({ accountId: r.account_id }, r.email_list_id, addresses, hold);
    const rejected = entries.filter((e) => 'error' in e).length;
    counts = { accepted: entries.length - rejected, rejected };
  } catch (error) {
    await interruptIdempotencyKey(hold);
    throw error;
  }
  await completeIdempotencyKey(hold, { statusCode: 200, body: JSON.stringify(counts) });
  return counts;
}

/** The import no longer holds its list: the list's round ends here if its emails were all finished before. */
const endRound = (r: ImportRecord) => endListRounds([{ accountId: r.account_id, listId: r.email_list_id }]);

/** Ends the import in error and lets its file go. */
async function fail(r: ImportRecord, message: string): Promise<Step> {
  if (await failImport(r, message)) await endRound(r);
  await dropFile(r);
  return { done: true };
}

const dropFile = (r: ImportRecord) =>
  deleteObject(importObjectKey(r.account_id, r.id)).catch((error) => {
    // The bucket's lifecycle rule removes it within a day all the same (it was uploaded tagged unattached).
    logger.warn('an import file stays in storage', describeError(error));
  });

/** The first pass over the whole file; the import ends in error when it is not a CSV of addresses. */
async function inspect(r: ImportRecord): Promise<Step | undefined> {
  const key = importObjectKey(r.account_id, r.id);
  const size = await objectSize(key);
  if (size === undefined) return fail(r, 'the uploaded file is gone');
  if (size > MAX_IMPORT_BYTES) return fail(r, `the file is larger than ${MAX_IMPORT_BYTES / 1024 / 1024} MB`);
  const controller = new AbortController();
  try {
    const read = await readObject(key, 0, controller.signal);
    if (!read) return fail(r, 'the uploaded file is gone');
    const found = await inspectCsv(read.body);
    await recordInspection(r, { ...found, etag: read.etag });
    Object.assign(r, { row_count: found.rowCount, column: found.column, next_byte: found.dataStart, etag: read.etag });
    return undefined;
  } catch (error) {
    if (error instanceof ImportFileError) return fail(r, error.message);
    throw error;
  } finally {
    controller.abort();
  }
}

/** The second pass, from where the last run stopped until done or out of time. */
async function importRows(r: ImportRecord, deadline: number): Promise<Step> {
  const controller = new AbortController();
  let fromRow = r.rows_done;
  try {
    const read = await readObject(importObjectKey(r.account_id, r.id), r.next_byte, controller.signal, r.etag ?? undefined);
    if (!read) return fail(r, 'the uploaded file was replaced or removed during the import');
    let chunk: string[] = [];
    const flush = async (nextByte: number): Promise<Step | undefined> => {
      const counts = await addChunk(r, fromRow, chunk);
      if ('heldUntilMs' in counts) return { done: false, againAtMs: counts.heldUntilMs };
      const toRow = fromRow + chunk.length;
      // False: another run counted this chunk; the next step reads the record again.
      if (!(await advanceImport(r, { fromRow, toRow, nextByte, ...counts }))) return { done: false };
      fromRow = toRow;
      chunk = [];
      return undefined;
    };
    let nextByte = r.next_byte;
    for await (const row of csvRows(read.body, r.column ?? 0, r.next_byte)) {
      chunk.push(row.address);
      nextByte = row.nextByte;
      if (chunk.length < CHUNK_ROWS) continue;
      const stop = await flush(row.nextByte);
      if (stop) return stop;
      // Between chunks: the next run continues from the byte recorded.
      if (Date.now() > deadline) return { done: false };
    }
    if (chunk.length > 0) {
      const stop = await flush(nextByte);
      if (stop) return stop;
    }
    if (await completeImport(r)) await endRound(r);
    else {
      // The file ended before the rows its first pass counted: it changed under the import (where storage does not
      // refuse a read of another version). Ended in error rather than left importing; what was added stays.
      const now = await getImport(r.account_id, r.email_list_id, r.id);
      if (now?.status === 'importing') {
        return fail(
          now,
          `the file ended after ${now.rows_done} of its ${now.row_count} rows: it changed during the import; those rows were added: import the rest in a new file`,
        );
      }
    }
    await dropFile(r);
    return { done: true };
  } catch (error) {
    if (error instanceof DomainError && error.kind === 'not_found') return fail(r, 'the email list was deleted during the import');
    if (error instanceof ImportFileError) return fail(r, error.message);
    // A long read can lose its connection (the reader pauses while chunks are stored); one that got rows in
    // reopens at once from the byte recorded. One that got none fails this run, and the queue tries again later.
    if (error instanceof StorageReadError && fromRow > r.rows_done) {
      logger.info('import read interrupted; reading on from the recorded byte', describeError(error));
      return { done: false };
    }
    throw error;
  } finally {
    controller.abort();
  }
}

/** One run of a `list-import` job (`listImport` in shared/email/list-import.ts, which imports this module on the first run). */
export async function importStep(job: Job<ImportPayload>, deadline: number): Promise<Step> {
  const r = await getImport(job.accountId, job.payload.listId, job.payload.importId);
  if (!r) return { done: true };
  if (r.status === 'completed' || r.status === 'error') {
    // Ended by a run that may have died before ending its list's round: ending it again changes nothing.
    await endRound(r);
    return { done: true };
  }
  if (r.status === 'awaiting_upload') {
    if ((await objectSize(importObjectKey(r.account_id, r.id))) === undefined) {
      if (nowSeconds() > r.upload_expires_at + UPLOAD_GRACE_SECONDS) return fail(r, 'no file was uploaded within an hour');
      return { done: false, againAtMs: Date.now() + UPLOAD_POLL_MS };
    }
    // Whichever write started it (this one, or a GET's) made it hold its list.
    await markImporting(r);
    Object.assign(r, { status: 'importing', holds_list: true });
  }
  if (r.row_count === null) {
    const ended = await inspect(r);
    if (ended) return ended;
    if (Date.now() > deadline) return { done: false };
  }
  return importRows(r, deadline);
}

/**
 * A `list-import` whose runs kept failing for reasons other than its file
 * (those end it at once, `fail`): it ends `error` so its owner can start
 * again, rather than showing `importing` for ever. What earlier chunks
 * added stays added; the message says so.
 */
export async function abandonImport(job: Job<ImportPayload>): Promise<void> {
  const r = await getImport(job.accountId, job.payload.listId, job.payload.importId);
  if (!r || r.status === 'completed' || r.status === 'error') return;
  await fail(
    r,
    r.rows_done > 0
      ? `the import stopped after ${r.rows_done} rows, failing again and again; those rows were added: import the rest in a new file`
      : 'the import kept failing before adding any row; try again with a new import',
  );
}
