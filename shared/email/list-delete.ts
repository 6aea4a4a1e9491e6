import type { Tenant } from '#shared/data/tokens';
import { deleteEmailList } from '#shared/data/email-lists';
import { notFound } from '#shared/errors';
import { jobPut, newJob, startJob } from '#shared/jobs/run';
import { purgeList } from '#shared/purge/list';

/**
 * Deleting an email list: gone for readers at once; its exports' files, then
 * its emails, are purged now and, if many, continued from the queue. A
 * module of its own, so that the list's reads carry none of the purge.
 */
export async function deleteList(who: Tenant, id: number, deadline: number) {
  const job = newJob(purgeList, who.accountId, { listId: id });
  if (!(await deleteEmailList(who.accountId, id, [jobPut(job)]))) throw notFound('email list', String(id), 'id');
  await startJob(purgeList, job, deadline);
}
