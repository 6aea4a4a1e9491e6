import { jobItem, type JobRecord } from '#shared/data/jobs';
import { attr, condition } from '#shared/db/expression';
import { deleteItem, putItem, unlessConditionFails, type Item } from '#shared/db/items';
import { scanPages } from '#shared/db/scan';

type Moved = Omit<JobRecord, 'pending' | 'holder'>;

/** A 0.3 fan-out record (`ACC#<acct>#FANOUT#<msg>`) as the job that does the same: a delivery, or a retraction begun. */
function fromFanout(item: Item): Moved {
  return {
    kind: item.stage === 'retract' ? 'retraction' : 'fanout',
    accountId: String(item.account_id),
    subject: `MSG#${String(item.message_id)}`,
    payload: {
      messageId: String(item.message_id),
      groupId: String(item.group_id),
      sender: String(item.sender),
      createdAt: Number(item.created_at),
      recipients: item.recipients,
    },
    cursor: Number(item.done_count ?? 0),
    createdMs: Number(item.created_at) * 1000,
  };
}

/** A 0.3 purge record (`ACC#<acct>#PURGE#<parent>`, its job in `job`) as the purge job. */
function fromPurge(item: Item): Moved {
  const { kind, accountId, chain: _chain, ...payload } = item.job as Record<string, unknown>;
  const parent =
    kind === 'purge-conversation'
      ? `CONV#${String(payload.conversationId)}`
      : kind === 'purge-list'
        ? `LIST#${String(payload.listId)}`
        : kind === 'purge-contact'
          ? `CONTACT#${String(payload.contactId)}`
          : `GROUP#${String(payload.groupId)}`;
  return { kind: String(kind), accountId: String(accountId), subject: parent, payload, cursor: 0, createdMs: Number(item.created_at_ms) };
}

/**
 * 0.3 → 0.4: a group message's fan-out record and a deletion's purge record
 * become durable jobs (shared/jobs/). A delivered fan-out stays on record
 * as the list its retraction must reach; an unfinished one is due at once,
 * so the sweeper's next pass queues it. Each old item is deleted once its
 * job is written. Idempotent: run it again after an interruption.
 */
export async function migrateJobs(log: (line: string) => void = () => undefined) {
  const counts = { fanouts: 0, purges: 0 };
  for await (const page of scanPages(condition`${attr('type')} IN (${'fanout'}, ${'purge'})`)) {
    for (const item of page) {
      const job = item.type === 'fanout' ? fromFanout(item) : fromPurge(item);
      const unfinished = item.gsi2pk !== undefined;
      // A job already written (a run interrupted before the old item's delete, or a newer job of the same subject) stays as it is.
      await unlessConditionFails(putItem(jobItem(job, unfinished ? { dueMs: Date.now() } : {}), condition`attribute_not_exists(pk)`));
      await deleteItem({ pk: String(item.pk), sk: String(item.sk) });
      counts[item.type === 'fanout' ? 'fanouts' : 'purges']++;
      log(`${String(item.pk)}: ${job.kind} job ${job.subject}${unfinished ? ', due now' : ''}`);
    }
  }
  return counts;
}
