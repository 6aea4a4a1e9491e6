import { config } from '#shared/config';
import { applyDeltas, releaseTokens, type Key, type PendingDeltas } from '#shared/data/collections';
import { deleteOutbox, dropOutboxDeltas, type OutboxItem } from '#shared/data/outbox';
import { requireQueue, sendJsonBatch } from '#shared/util/sqs';

/** One queue message names up to this many emails of one account. */
export const EMAILS_PER_MESSAGE = 10;

export interface ValidationJob {
  accountId: string;
  emailIds: number[];
}

/** Puts emails of one account on the validation queue, EMAILS_PER_MESSAGE to a message. */
export async function enqueueValidation(accountId: string, ids: number[]): Promise<void> {
  const jobs: ValidationJob[] = [];
  for (let i = 0; i < ids.length; i += EMAILS_PER_MESSAGE) jobs.push({ accountId, emailIds: ids.slice(i, i + EMAILS_PER_MESSAGE) });
  if (jobs.length) await sendJsonBatch(requireQueue(config().validationQueueUrl, 'VALIDATION_QUEUE_URL'), jobs);
}

const pendingOf = (outbox: OutboxItem): PendingDeltas[] => (outbox.deltas ? [{ token: outbox.token, deltas: outbox.deltas }] : []);

/**
 * Finishes what stored outboxes (of one collection) recorded, in an order
 * that any crash can resume from: apply their counts (exactly once, by
 * token), queue their work, delete them (a held one only drops its counts),
 * then forget the tokens. Returns the collection item after the counts, or
 * 'gone' when it was deleted meanwhile.
 *
 * `onlyIds` limits the work queued (emails finished inline need none).
 */
export async function settleOutboxes(
  collection: Key,
  mustExist: boolean,
  outboxes: OutboxItem[],
  onlyIds?: Set<number>,
): Promise<Record<string, unknown> | 'gone'> {
  const pending = outboxes.flatMap(pendingOf);
  const root = await applyDeltas(collection, pending, mustExist);
  const ready = outboxes.filter((o) => !o.awaiting);
  const byAccount = new Map<string, number[]>();
  for (const outbox of ready) {
    const ids = outbox.email_ids.filter((id) => !onlyIds || onlyIds.has(id));
    byAccount.set(outbox.account_id, [...(byAccount.get(outbox.account_id) ?? []), ...ids]);
  }
  // A deleted list's emails are purged: nothing to validate.
  if (root !== 'gone') for (const [accountId, ids] of byAccount) await enqueueValidation(accountId, ids);
  await Promise.all(outboxes.map((o) => (o.awaiting ? dropOutboxDeltas(o) : deleteOutbox(o))));
  await releaseTokens(collection, pending, root === 'gone' ? undefined : root);
  return root;
}

/** Settles outboxes of any collections, grouped by collection. */
export async function settleAll(outboxes: OutboxItem[]): Promise<void> {
  const groups = new Map<string, OutboxItem[]>();
  for (const o of outboxes) groups.set(o.collection.pk, [...(groups.get(o.collection.pk) ?? []), o]);
  for (const group of groups.values()) await settleOutboxes(group[0]!.collection, group[0]!.collection_must_exist, group);
}

export function parseValidationJob(body: string): ValidationJob | undefined {
  try {
    const job = JSON.parse(body) as ValidationJob;
    const ok =
      typeof job.accountId === 'string' &&
      Array.isArray(job.emailIds) &&
      job.emailIds.length > 0 &&
      job.emailIds.length <= EMAILS_PER_MESSAGE &&
      job.emailIds.every((id) => Number.isSafeInteger(id));
    return ok ? job : undefined;
  } catch {
    return undefined;
  }
}
