import { randomUUID } from 'node:crypto';
import { config } from '#shared/config';
import { batchDelete } from '#shared/db/batch';
import { listEmailKeys } from '#shared/data/emails';
import { conversationMessageKeys } from '#shared/data/messages';
import { claimPurge, deletePurgeRecord, releasePurge, purgeStartedAt, unfinishedPurges, type PurgeJob } from '#shared/data/purges';
import { describeError, logger } from '#shared/util/logger';
import { requireQueue, sendJson } from '#shared/util/sqs';

export type { PurgeJob } from '#shared/data/purges';

/**
 * Deleting a conversation or an email list removes the parent at once, with
 * a purge record in the same transaction, and its children (messages,
 * emails) in batches: inline while the request has time, then from the
 * purge queue, each job re-enqueueing itself until done. The record is
 * dropped only by a pass that finds nothing left at least SETTLE_MS after
 * the delete (so index entries that lagged behind are caught too); until
 * then the sweeper re-queues the job, also when queueing it failed.
 */
const BATCH = 100;
export const SETTLE_MS = 60_000;
/** The sweeper re-queues purges started longer ago than this and still on record. */
export const UNFINISHED_AFTER_MS = 2 * 60_000;

const nextBatch = (job: PurgeJob) =>
  job.kind === 'purge-conversation'
    ? conversationMessageKeys(job, job.conversationId, BATCH)
    : listEmailKeys(job.accountId, job.listId, BATCH);

/**
 * Deletes batches until none are left or the deadline (epoch ms) passes.
 * 'skipped' when another chain holds the purge (or it is finished).
 */
export async function purge(job: PurgeJob, deadline: number): Promise<'done' | 'more' | 'skipped'> {
  if (!(await claimPurge(job, job.chain ?? (job.chain = randomUUID())))) return 'skipped';
  for (;;) {
    const batch = await nextBatch(job);
    if (batch.length === 0) {
      const started = await purgeStartedAt(job);
      if (started !== undefined && Date.now() - started >= SETTLE_MS) await deletePurgeRecord(job);
      else await releasePurge(job, job.chain!);
      return 'done';
    }
    await batchDelete(batch);
    if (Date.now() > deadline) return 'more';
  }
}

export async function enqueuePurge(job: PurgeJob): Promise<void> {
  await sendJson(requireQueue(config().purgeQueueUrl, 'PURGE_QUEUE_URL'), job);
}

/** Purges inline while time allows, then hands the rest to the purge worker (or, failing that, the sweeper). */
export async function startPurge(job: PurgeJob, deadline: number): Promise<void> {
  if ((await purge(job, deadline)) !== 'more') return;
  logger.info('purge continues asynchronously', { job });
  await enqueuePurge(job).catch(async (error) => {
    logger.warn('purge queueing deferred to the sweeper', { job, ...describeError(error) });
    await releasePurge(job, job.chain!);
  });
}

/** The sweeper's pass: purges still on record are queued again for a (final) pass. */
export async function requeueUnfinishedPurges(): Promise<number> {
  // Each gets a new chain; a stalled chain's late message then finds the lease taken and stops.
  const jobs = await unfinishedPurges(Date.now() - UNFINISHED_AFTER_MS);
  for (const job of jobs) await enqueuePurge({ ...job, chain: randomUUID() });
  return jobs.length;
}

export function parsePurgeJob(body: string): PurgeJob | undefined {
  try {
    const job = JSON.parse(body) as PurgeJob;
    if (typeof job.accountId !== 'string') return undefined;
    if (job.chain !== undefined && typeof job.chain !== 'string') return undefined;
    if (job.kind === 'purge-conversation' && typeof job.contactId === 'string' && typeof job.conversationId === 'string') return job;
    if (job.kind === 'purge-list' && Number.isSafeInteger(job.listId)) return job;
    return undefined;
  } catch {
    return undefined;
  }
}
