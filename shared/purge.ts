import { randomUUID } from 'node:crypto';
import { config } from '#shared/config';
import { batchDelete } from '#shared/db/batch';
import { listEmailKeys } from '#shared/data/emails';
import { conversationMessageKeys } from '#shared/data/messages';
import { conversationIdsOf, removeConversation } from '#shared/data/conversations';
import { groupsOf, memberKeys, removeMember } from '#shared/data/group-members';
import { contactTokenKeys } from '#shared/data/tokens';
import { keys } from '#shared/db/keys';
import type { Key } from '#shared/db/items';
import {
  claimPurge,
  deletePurgeRecord,
  purgeRecordPut,
  releasePurge,
  purgeStartedAt,
  unfinishedPurges,
  type PurgeJob,
} from '#shared/data/purges';
import { describeError, logger } from '#shared/util/logger';
import { requireQueue, sendJson } from '#shared/util/sqs';

export type { PurgeJob } from '#shared/data/purges';

/**
 * Deleting a conversation, an email list, a contact or a group removes the
 * parent at once, with a purge record in the same transaction, and its
 * children (messages, emails, tokens, memberships, members) in batches: inline while the request has time, then from the
 * purge queue, each job re-enqueueing itself until done. The record is
 * dropped only by a pass that finds nothing left at least SETTLE_MS after
 * the delete (so index entries that lagged behind are caught too); until
 * then the sweeper re-queues the job, also when queueing it failed.
 */
const BATCH = 100;
/** Groups left (and conversations removed) per step: each is a transaction of its own. */
const GROUPS_AT_ONCE = 10;
export const SETTLE_MS = 60_000;
/** The sweeper re-queues purges started longer ago than this and still on record. */
export const UNFINISHED_AFTER_MS = 2 * 60_000;

/** Deletes these keys; whether there were any (none left: the purge is done). */
async function deleteAll(batch: Key[]): Promise<boolean> {
  if (batch.length === 0) return false;
  await batchDelete(batch);
  return true;
}

/** One bounded piece of the purge; false when nothing was left to do. */
function step(job: PurgeJob, deadline: number): Promise<boolean> {
  switch (job.kind) {
    case 'purge-conversation':
      return conversationMessageKeys(job, job.conversationId, BATCH).then(deleteAll);
    case 'purge-list':
      return listEmailKeys(job.accountId, job.listId, BATCH).then(deleteAll);
    case 'purge-group':
      return memberKeys(job.accountId, job.groupId, BATCH).then(deleteAll);
    case 'purge-contact':
      return removeContactRemains(job, deadline);
  }
}

/**
 * What a deleted contact leaves: its tokens first (they stop working, and
 * its realtime connections close at their next event), then its place in
 * each group, then its own conversations (each purged like a deleted one).
 */
async function removeContactRemains(job: PurgeJob & { kind: 'purge-contact' }, deadline: number): Promise<boolean> {
  const who = { accountId: job.accountId, contactId: job.contactId };
  if (await deleteAll(await contactTokenKeys(who, BATCH))) return true;
  const groups = await groupsOf(job.accountId, job.contactId, GROUPS_AT_ONCE);
  if (groups.length > 0) {
    // removeMember is false for a group deleted meanwhile: its own purge takes the member item then.
    await Promise.all(groups.map((groupId) => removeMember(job.accountId, groupId, job.contactId)));
    await deleteAll(groups.map((grp) => keys.groupMember.key({ acct: job.accountId, grp, ct: job.contactId })));
    return true;
  }
  const conversations = await conversationIdsOf(who, GROUPS_AT_ONCE);
  for (const conversationId of conversations) {
    const purgeJob = { kind: 'purge-conversation', accountId: job.accountId, contactId: job.contactId, conversationId } as const;
    if (await removeConversation(who, conversationId, [purgeRecordPut(purgeJob)])) await startPurge(purgeJob, deadline);
  }
  return conversations.length > 0;
}

/**
 * Deletes batches until none are left or the deadline (epoch ms) passes.
 * 'skipped' when another chain holds the purge (or it is finished).
 */
export async function purge(job: PurgeJob, deadline: number): Promise<'done' | 'more' | 'skipped'> {
  if (!(await claimPurge(job, job.chain ?? (job.chain = randomUUID())))) return 'skipped';
  for (;;) {
    if (!(await step(job, deadline))) {
      const started = await purgeStartedAt(job);
      if (started !== undefined && Date.now() - started >= SETTLE_MS) await deletePurgeRecord(job);
      else await releasePurge(job, job.chain!);
      return 'done';
    }
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
    if (job.kind === 'purge-contact' && typeof job.contactId === 'string') return job;
    if (job.kind === 'purge-group' && typeof job.groupId === 'string') return job;
    return undefined;
  } catch {
    return undefined;
  }
}
