import type * as v from 'valibot';
import { batchDelete } from '#shared/db/batch';
import type { Key } from '#shared/db/items';
import type { JobKind } from '#shared/jobs/kind';
import type { JobName } from '#shared/jobs/names';

/**
 * Deleting a parent (a conversation, an email list, a contact, a group)
 * removes it at once, with a purge job recorded in the same transaction;
 * the job deletes its children in batches: inline while the request has
 * time, then from the purge queue. Children are found through queries, so
 * a pass can miss what an index had not caught up with: the job is
 * finished only by a pass that finds nothing left at least SETTLE_MS after
 * the delete (shared/jobs/kind.ts, `settleMs`).
 */
export const BATCH = 100;
export const SETTLE_MS = 60_000;

/** Deletes these keys; whether there were any (none left: the purge is done). */
export async function deleteAll(batch: Key[]): Promise<boolean> {
  if (batch.length === 0) return false;
  await batchDelete(batch);
  return true;
}

/** A purge whose every step deletes the next BATCH of children `next` finds. */
export const batchPurge = <P>(
  name: JobName,
  payload: v.GenericSchema<unknown, P>,
  subject: (p: P) => string,
  next: (accountId: string, p: P) => Promise<Key[]>,
): JobKind<P> => ({
  name,
  payload,
  subject,
  settleMs: SETTLE_MS,
  step: async (job) => ({ done: !(await deleteAll(await next(job.accountId, job.payload))) }),
});
