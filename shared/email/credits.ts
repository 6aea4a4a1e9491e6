import { transactNamed, type NamedItems } from '#shared/db/batch';
import { creditBalance, debitCredits } from '#shared/data/accounts';
import { listReleased } from '#shared/data/email-lists';
import { emailReleased, getEmails, restoreEmails } from '#shared/data/emails';
import {
  allAwaitingOutboxes,
  awaitingOutboxes,
  deleteOutbox,
  markDispatched,
  outboxReadyUpdate,
  type OutboxItem,
} from '#shared/data/outbox';
import { enqueueValidation, settleOutboxes, workOf } from '#shared/email/work';

/**
 * Work held back for lack of credits resumes, oldest first, as far as the
 * balance now reaches: each held batch is debited, released and queued in one
 * transaction. Called after credits are added and by the sweeper.
 */
export async function resumeAwaiting(accountId: string): Promise<number> {
  let released = 0;
  for (const outbox of await awaitingOutboxes(accountId)) {
    const outcome = await release(outbox);
    if (outcome === 'short') break;
    if (outcome === 'released') released++;
  }
  return released;
}

async function release(outbox: OutboxItem): Promise<'released' | 'short' | 'skipped'> {
  // Its counts first, if the request that stored it did not get that far.
  if (outbox.deltas) {
    await restoreEmails([outbox]);
    await settleOutboxes(outbox.collection, outbox.collection_must_exist, [outbox]);
  }
  const emails = (await getEmails(outbox.account_id, outbox.email_ids)).filter((e) => e.awaiting);
  if (emails.length === 0) {
    await deleteOutbox(outbox); // everything it held was deleted meanwhile
    return 'skipped';
  }
  const balance = await creditBalance(outbox.account_id);
  if (balance !== undefined && balance < emails.length) return 'short';

  const items: NamedItems = [['outbox', outboxReadyUpdate(outbox)]];
  if (balance !== undefined) items.push(['debit', debitCredits(outbox.account_id, emails.length)]);
  for (const email of emails) items.push([`email:${email.id}`, emailReleased(email)]);
  const listId = emails[0]!.email_list_id;
  if (listId !== null) items.push(['list', listReleased(outbox.account_id, listId, emails.length)]);
  // Lost a race (credits spent, an email deleted, the list deleted): the next run looks again.
  if ((await transactNamed(items)).length > 0) return 'skipped';
  await enqueueValidation(outbox.account_id, emails.map(workOf));
  await markDispatched([{ ...outbox, awaiting: false }]);
  return 'released';
}

/** The sweeper's pass over every account with held work. */
export async function resumeAllAwaiting(): Promise<void> {
  const accounts = new Set((await allAwaitingOutboxes()).map((o) => o.account_id));
  for (const accountId of accounts) await resumeAwaiting(accountId);
}
