import { txPut, txUpdate, type TransactItem } from '#shared/db/batch';
import { condition, update } from '#shared/db/expression';
import { conditionHeld, deleteItem, getItem, query, updateItem } from '#shared/db/items';
import { keys } from '#shared/db/keys';

/**
 * A group message's recipients (the members when it was sent, the sender
 * left out) and how far its delivery, or later its retraction, went.
 * Written in the send's transaction, so a crash right after the commit
 * loses no delivery: until it is finished it is in the pending index,
 * which the sweeper reads. Kept after delivery, as the list a retraction
 * must reach.
 */
export interface Fanout {
  accountId: string;
  messageId: string;
  groupId: string;
  sender: string;
  createdAt: number;
  recipients: string[];
  op: 'deliver' | 'retract';
  /** Recipients before this index are done. */
  next: number;
}

const keyOf = (accountId: string, messageId: string) => keys.fanout.key({ acct: accountId, msg: messageId });

export function fanoutPut(f: Omit<Fanout, 'op' | 'next'>): TransactItem {
  return txPut(
    {
      ...keyOf(f.accountId, f.messageId),
      ...keys.pendingFanouts.entry({ ms: Date.now() }),
      type: 'fanout',
      account_id: f.accountId,
      message_id: f.messageId,
      group_id: f.groupId,
      sender: f.sender,
      created_at: f.createdAt,
      recipients: f.recipients,
      stage: 'deliver',
      done_count: 0,
    },
    condition`attribute_not_exists(pk)`,
  );
}

export async function getFanout(accountId: string, messageId: string): Promise<Fanout | undefined> {
  const item = await getItem(keyOf(accountId, messageId), true);
  if (!item) return undefined;
  return {
    accountId,
    messageId,
    groupId: item.group_id as string,
    sender: item.sender as string,
    createdAt: Number(item.created_at),
    recipients: item.recipients as string[],
    op: item.stage as Fanout['op'],
    next: Number(item.done_count),
  };
}

/** Transaction part of the sender's delete: the same recipients, from the first, now to retract from. */
export const retractionStart = (accountId: string, messageId: string): TransactItem =>
  txUpdate(
    keyOf(accountId, messageId),
    update()
      .set`stage = ${'retract'}, done_count = ${0}, gsi2pk = ${keys.pendingFanouts.partition()}, gsi2sk = ${keys.pendingFanouts.sortKey({ ms: Date.now() })}`
      .when`attribute_exists(pk)`,
  );

/**
 * Records progress, and that a run is alive (the pending time moves on, so
 * the sweeper leaves a long fan-out to the run making it); false when the
 * operation changed (a retraction began) or another run is further on.
 */
export const advanceFanout = (f: Fanout, next: number) =>
  conditionHeld(
    updateItem(
      keyOf(f.accountId, f.messageId),
      update().set`done_count = ${next}, gsi2sk = ${keys.pendingFanouts.sortKey({ ms: Date.now() })}`
        .when`stage = ${f.op} AND done_count < ${next}`,
    ),
  );

/** A finished delivery leaves the pending index (the record stays for a retraction); a finished retraction removes it. */
export async function finishFanout(f: Fanout): Promise<void> {
  if (f.op === 'retract') await conditionHeld(deleteItem(keyOf(f.accountId, f.messageId), condition`stage = ${'retract'}`));
  else await conditionHeld(updateItem(keyOf(f.accountId, f.messageId), update().remove`gsi2pk, gsi2sk`.when`stage = ${'deliver'}`));
}

/** Fan-outs started before `beforeMs` and still pending, oldest first. */
export async function unfinishedFanouts(beforeMs: number, limit = 100): Promise<{ accountId: string; messageId: string }[]> {
  const pending = keys.pendingFanouts;
  const items = await query(
    { index: pending.index, partition: pending.partition(), sort: ['<', pending.sortKey({ ms: beforeMs })] },
    limit,
    1,
  );
  return items.map((item) => ({ accountId: item.account_id as string, messageId: item.message_id as string }));
}
