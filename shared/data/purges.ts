import { txPut, type TransactItem } from '#shared/db/batch';
import { update } from '#shared/db/expression';
import { conditionHeld, deleteItem, getItem, query, updateItem } from '#shared/db/items';
import { keys } from '#shared/db/keys';

/** Deleting a parent removes it at once and its children in batches (see shared/purge.ts). */
export type PurgeJob = (
  | { kind: 'purge-conversation'; accountId: string; contactId: string; conversationId: string }
  | { kind: 'purge-list'; accountId: string; listId: number }
  /** A deleted contact's tokens, group memberships and own conversations. */
  | { kind: 'purge-contact'; accountId: string; contactId: string }
  /** A deleted group's members. */
  | { kind: 'purge-group'; accountId: string; groupId: string }
) & {
  /** The chain of messages working on it: one at a time holds the purge's lease. */
  chain?: string;
};

function parentOf(job: PurgeJob): string {
  switch (job.kind) {
    case 'purge-conversation':
      return `CONV#${job.conversationId}`;
    case 'purge-list':
      return `LIST#${job.listId}`;
    case 'purge-contact':
      return `CONTACT#${job.contactId}`;
    case 'purge-group':
      return `GROUP#${job.groupId}`;
  }
}
const keyOf = (job: PurgeJob) => keys.purge.key({ acct: job.accountId, parent: parentOf(job) });

/**
 * Transaction part written with the parent's delete: the purge is then on
 * record however the request ends, and the sweeper finishes what it left.
 */
export function purgeRecordPut(job: PurgeJob): TransactItem {
  const now = Date.now();
  return txPut({ ...keyOf(job), ...keys.pendingPurges.entry({ ms: now }), type: 'purge', job, created_at_ms: now });
}

export async function purgeStartedAt(job: PurgeJob): Promise<number | undefined> {
  const item = await getItem(keyOf(job), true);
  return item ? Number(item.created_at_ms) : undefined;
}

/** How long a chain holds a purge after each claim: longer than one hop (a worker run plus the queue's delivery). */
export const PURGE_LEASE_MS = 3 * 60_000;

/**
 * Claims (or renews) the purge for `chain`: at most one chain works on a
 * purge at a time. False when another chain holds an unexpired lease, or
 * the purge is finished (no record).
 */
export async function claimPurge(job: PurgeJob, chain: string): Promise<boolean> {
  const now = Date.now();
  const claim = update().set`lease_owner = ${chain}, lease_until = ${now + PURGE_LEASE_MS}`
    .when`attribute_exists(pk) AND (attribute_not_exists(lease_until) OR lease_until < ${now} OR lease_owner = ${chain})`;
  return conditionHeld(updateItem(keyOf(job), claim));
}

/** A chain that found nothing left but must wait for the settle time lets the sweeper take the purge up again. */
export async function releasePurge(job: PurgeJob, chain: string): Promise<void> {
  await conditionHeld(updateItem(keyOf(job), update().remove`lease_owner, lease_until`.when`lease_owner = ${chain}`));
}

export async function deletePurgeRecord(job: PurgeJob): Promise<void> {
  await deleteItem(keyOf(job));
}

/** Purges started before `beforeMs`, not yet finished, and with no chain holding them, oldest first. */
export async function unfinishedPurges(beforeMs: number, limit = 100): Promise<PurgeJob[]> {
  const pending = keys.pendingPurges;
  const items = await query(
    { index: pending.index, partition: pending.partition(), sort: ['<', pending.sortKey({ ms: beforeMs })] },
    limit,
    1,
  );
  const now = Date.now();
  return items.filter((item) => !(Number(item.lease_until) >= now)).map((item) => item.job as PurgeJob);
}
