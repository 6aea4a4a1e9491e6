import { config } from '#shared/config';
import { batchDelete } from '#shared/db/batch';
import { listEmailKeys } from '#shared/data/emails';
import { conversationMessageKeys } from '#shared/data/messages';
import { logger } from '#shared/util/logger';
import { requireQueue, sendJson } from '#shared/util/sqs';

/**
 * Deleting a conversation or an email list removes the parent at once and
 * its children (messages, emails) in batches: inline while the request has
 * time, then from the purge queue, each job re-enqueueing itself until done.
 */
export type PurgeJob =
  | { kind: 'purge-conversation'; accountId: string; conversationId: string }
  | { kind: 'purge-list'; accountId: string; listId: number };

const BATCH = 100;

const nextBatch = (job: PurgeJob) =>
  job.kind === 'purge-conversation'
    ? conversationMessageKeys(job.accountId, job.conversationId, BATCH)
    : listEmailKeys(job.accountId, job.listId, BATCH);

/** Deletes batches until none are left or the deadline (epoch ms) passes. */
export async function purge(job: PurgeJob, deadline: number): Promise<'done' | 'more'> {
  for (;;) {
    const batch = await nextBatch(job);
    if (batch.length === 0) return 'done';
    await batchDelete(batch);
    if (Date.now() > deadline) return 'more';
  }
}

export async function enqueuePurge(job: PurgeJob): Promise<void> {
  await sendJson(requireQueue(config().purgeQueueUrl, 'PURGE_QUEUE_URL'), job);
}

/** Purges inline while time allows, then hands the rest to the purge worker. */
export async function startPurge(job: PurgeJob, deadline: number): Promise<void> {
  if ((await purge(job, deadline)) === 'done') return;
  logger.info('purge continues asynchronously', { job });
  await enqueuePurge(job);
}

export function parsePurgeJob(body: string): PurgeJob | undefined {
  try {
    const job = JSON.parse(body) as PurgeJob;
    if (typeof job.accountId !== 'string') return undefined;
    if (job.kind === 'purge-conversation' && typeof job.conversationId === 'string') return job;
    if (job.kind === 'purge-list' && Number.isSafeInteger(job.listId)) return job;
    return undefined;
  } catch {
    return undefined;
  }
}
