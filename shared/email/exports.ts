import type { Hold } from '#shared/data/idempotency';
import type { Tenant } from '#shared/data/tokens';
import { exportParts, getExport, getListExport, type Deliverability, type ExportRecord } from '#shared/data/exports';
import { transactNamed } from '#shared/db/batch';
import { notFound } from '#shared/errors';
import { exportObjectKey, listExport } from '#shared/email/export-job';
import { EXPORT_RETENTION_DAYS, URL_SECONDS } from '#shared/files/settings';
import { downloadUrl } from '#shared/files/storage';
import { jobPut, newJob, startJob } from '#shared/jobs/run';
import { derivedId, newId, nowSeconds } from '#shared/util/ids';

/**
 * CSV exports of a list's emails (docs/email-validation.md, "Exports"):
 * recorded with the job that writes them in one transaction, written
 * inline while the request has time (a small list is done before the
 * answer) and continued from the purge queue.
 */
export async function presentExport(r: ExportRecord) {
  const name = `email-list-${r.list_id}-${r.id}.csv`;
  return {
    id: r.id,
    email_list_id: r.list_id,
    status: r.status,
    row_count: r.row_count,
    // Made for each read, so it is always good for the next hour, never for longer.
    download_url: r.status === 'completed' ? await downloadUrl(exportObjectKey(r.account_id, r.id), name, URL_SECONDS) : null,
    created_at: r.created_at,
  };
}

export async function createExport(
  who: Tenant,
  listId: number,
  input: { deliverability?: Deliverability[] },
  deadline: number,
  idempotency?: Hold,
) {
  const createdMs = idempotency?.createdMs ?? Date.now();
  // A retry of one idempotent request makes the very id its first attempt made.
  const id = idempotency ? derivedId('exp', createdMs, idempotency.generation) : newId('exp', createdMs);
  const record: ExportRecord = {
    id,
    account_id: who.accountId,
    list_id: listId,
    deliverability: input.deliverability ? [...new Set(input.deliverability)] : null,
    status: 'processing',
    row_count: 0,
    created_at: Math.floor(createdMs / 1000),
    completed_at: null,
    upload_id: null,
    etags: [],
    after_seq: -1,
    read_done: false,
  };
  const job = newJob(listExport, who.accountId, { listId, exportId: id });
  const failed = await transactNamed([...exportParts(record), ['job', jobPut(job)]]);
  if (failed.includes('list')) throw notFound('email list', String(listId), 'id');
  if (failed.includes('export')) {
    // This request's earlier attempt committed it (and its job, which goes on without us).
    const earlier = await getExport(record);
    if (!earlier) throw new Error(`export ${id} neither created nor found`);
    return presentExport({ ...earlier, status: 'processing' });
  }
  await startJob(listExport, job, deadline);
  // The contract's answer to a create: processing, whatever the inline run got to; GET shows the rest.
  return presentExport(record);
}

/** The caller's export of the list; another account's or list's, or one past its retention, is a 404. */
export async function showExport(who: Tenant, listId: number, exportId: string) {
  const found = await getListExport({ account_id: who.accountId, list_id: listId, id: exportId });
  if (!found || found.created_at + EXPORT_RETENTION_DAYS * 86_400 <= nowSeconds()) throw notFound('export', exportId, 'exportId');
  return presentExport(found);
}
