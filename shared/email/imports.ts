import { randomUUID } from 'node:crypto';
import type { Hold } from '#shared/data/idempotency';
import { getEmailList } from '#shared/data/email-lists';
import { getImport, getListImport, importPut, markImporting, type ImportRecord } from '#shared/data/imports';
import { claimJob, releaseJob } from '#shared/data/jobs';
import type { Tenant } from '#shared/data/tokens';
import { transactWrite } from '#shared/db/batch';
import { cancellationCodes } from '#shared/db/errors';
import { notFound } from '#shared/errors';
import { importUploadUrl } from '#shared/files/object-reads';
import { objectSize, type Presigned } from '#shared/files/storage';
import type { Job } from '#shared/jobs/kind';
import { enqueueJob, enqueueWhenDue, jobDuePut } from '#shared/jobs/run';
import { derivedId, looksLikeId, newId, nowSeconds } from '#shared/util/ids';
import { describeError, logger } from '#shared/util/logger';

/**
 * CSV imports into an email list (the requests; the work is the
 * `list-import` job, shared/email/list-import.ts, whose run is
 * shared/email/import-job.ts). The import is recorded with its job,
 * due a little later and held by no chain: nothing tells this service
 * when a presigned upload completes (an S3 event notification would add
 * resources to a stack at its budget, and would work differently under
 * the local server), so the job looks for the object and, while it
 * is absent, lets itself go for another 15 s, queued for then (the
 * sweeper brings it back if that send fails). A GET that finds the object
 * starts it at once.
 */

/** How long the upload URL works. */
export const IMPORT_UPLOAD_SECONDS = 60 * 60;
/** How long the job waits between looks for the upload. */
export const UPLOAD_POLL_MS = 15_000;

export interface ImportPayload {
  listId: number;
  importId: string;
}

export const importSubject = (importId: string) => `IMPORT#${importId}`;
/** Where the CSV goes: under the account's own prefix, apart from message files. */
export const importObjectKey = (accountId: string, importId: string) => `imports/${accountId}/${importId}.csv`;

const presentUpload = (p: Presigned) => ({ url: p.url, method: 'PUT', headers: p.headers, expires_at: p.expiresAt });

export const presentImport = (r: ImportRecord, upload: Presigned | null) => ({
  id: r.id,
  email_list_id: r.email_list_id,
  status: r.status,
  upload: upload && presentUpload(upload),
  row_count: r.row_count,
  accepted_count: r.accepted_count,
  rejected_count: r.rejected_count,
  error: r.status === 'error' ? { message: r.error_message ?? 'the import failed' } : null,
  created_at: r.created_at,
});

/** The job of an import, as its record is first written. */
const importJob = (accountId: string, payload: ImportPayload, createdMs: number): Job<ImportPayload> => ({
  kind: 'list-import',
  accountId,
  subject: importSubject(payload.importId),
  payload,
  cursor: 0,
  createdMs,
  chain: randomUUID(),
});

/**
 * A new import of the list, with its upload URL. Under an idempotency key
 * the id comes from the request's generation: a retry after the write
 * finds the same import and answers it with a fresh URL.
 */
export async function createImport(who: Tenant, listId: number, hold?: Hold) {
  const now = Date.now();
  const id = hold ? derivedId('imp', hold.createdMs, hold.generation) : newId('imp', now);
  if (!(await getEmailList(who.accountId, listId))) throw notFound('email list', String(listId), 'id');
  const created = Math.floor(now / 1000);
  const record: ImportRecord = {
    id,
    account_id: who.accountId,
    email_list_id: listId,
    status: 'awaiting_upload',
    upload_expires_at: created + IMPORT_UPLOAD_SECONDS,
    row_count: null,
    column: null,
    etag: null,
    rows_done: 0,
    next_byte: 0,
    accepted_count: 0,
    rejected_count: 0,
    error_message: null,
    holds_list: false,
    created_at: created,
  };
  const job = importJob(who.accountId, { listId, importId: id }, now);
  let stored = record;
  try {
    await transactWrite({ TransactItems: [importPut(record), jobDuePut(job, now + UPLOAD_POLL_MS)] });
    await enqueueWhenDue({ ...job, kind: 'list-import' }, now + UPLOAD_POLL_MS);
  } catch (error) {
    // A retry of the same request (same id) whose first attempt wrote: answer the import as it is.
    if (!hold || cancellationCodes(error)?.[0] !== 'ConditionalCheckFailed') throw error;
    stored = (await getImport(who.accountId, listId, id)) ?? record;
  }
  return presentImport(stored, await uploadFor(stored));
}

/** A URL for the rest of the upload's hour, while the import still waits for it. */
async function uploadFor(r: ImportRecord): Promise<Presigned | null> {
  const left = r.upload_expires_at - nowSeconds();
  if (r.status !== 'awaiting_upload' || left <= 0) return null;
  return importUploadUrl(importObjectKey(r.account_id, r.id), left);
}

/**
 * The import as it stands. One still waiting whose object is there starts
 * now: its job is claimed by a new chain and queued, instead of waiting
 * for the sweeper.
 */
export async function showImport(who: Tenant, listId: number, importId: string) {
  const { record, list } = looksLikeId('imp', importId)
    ? await getListImport(who.accountId, listId, importId)
    : { list: Boolean(await getEmailList(who.accountId, listId)) };
  if (!list) throw notFound('email list', String(listId), 'id');
  if (!record) throw notFound('import', importId, 'importId');
  if (record.status === 'awaiting_upload' && (await objectSize(importObjectKey(record.account_id, record.id))) !== undefined) {
    if (await markImporting(record)) await startNow(who.accountId, importId);
    Object.assign(record, { status: 'importing', holds_list: true });
  }
  return presentImport(record, await uploadFor(record));
}

async function startNow(accountId: string, importId: string): Promise<void> {
  const ref = { accountId, subject: importSubject(importId) };
  const chain = randomUUID();
  try {
    // Taken from the chain its next look is queued for, if it waits: the file is there now.
    if (!(await claimJob(ref, chain, { fromQueued: true }))) return;
    await enqueueJob({ kind: 'list-import', ...ref, chain }).catch(async (error) => {
      // Due now instead: the sweeper's next pass starts it.
      logger.warn('import start deferred to the sweeper', describeError(error));
      await releaseJob(ref, chain, Date.now());
    });
  } catch (error) {
    // The job is on record and due within seconds: the sweeper starts it all the same.
    logger.warn('import start deferred to the sweeper', describeError(error));
  }
}
