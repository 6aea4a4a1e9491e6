import { transactNamed, txPut, txUpdate, TRANSACTION_MAX_ITEMS, type NamedItems, type TransactItem } from '#shared/db/batch';
import { attr, condition, update } from '#shared/db/expression';
import { conditionHeld, updateItem } from '#shared/db/items';
import { listFinished } from '#shared/data/email-lists';
import { emailItem, emailKey, type EmailRecord } from '#shared/data/emails';

/*
 * An email's status as the worker moves it: processing, finished with its
 * outcome, or released for validation once credits cover it.
 */

export type Outcome = { status: 'completed'; result: EmailRecord['result'] } | { status: 'error'; listError?: boolean };

/**
 * The email leaves pending/processing, only from an unfinished, released
 * state. Written whole (the worker knows every field): a put costs less
 * than an update that rewrites the item and its index entry anyway.
 */
const finishPut = (email: EmailRecord, outcome: Outcome): TransactItem =>
  txPut(
    emailItem({ ...email, status: outcome.status, result: outcome.status === 'completed' ? outcome.result : null }),
    condition`${attr('status')} IN (${'pending'}, ${'processing'}) AND awaiting = ${false}`,
  );

/**
 * Records a validation's end exactly once: the email leaves pending or
 * processing, and its list's pending counter drops, in one transaction. A
 * redelivered message finds the email already finished and changes nothing.
 */
export async function finishEmail(email: EmailRecord, outcome: Outcome): Promise<boolean> {
  const items: NamedItems = [['email', finishPut(email, outcome)]];
  if (email.email_list_id !== null) {
    const listError = outcome.status === 'error' && outcome.listError === true;
    items.push(['list', listFinished(email.account_id, email.email_list_id, 1, listError)]);
  }
  return (await transactNamed(items)).length === 0;
}

/**
 * Finishes several emails of one list (or standalone) in one transaction,
 * with one counter change; if any of them was finished meanwhile (a
 * redelivery), each is finished on its own instead. Returns those finished here.
 */
export async function finishEmails(done: { email: EmailRecord; outcome: Outcome }[]): Promise<EmailRecord[]> {
  if (done.length === 0) return [];
  const listId = done[0]!.email.email_list_id;
  const sameList = done.every((d) => d.email.email_list_id === listId && d.outcome.status === 'completed');
  if (done.length > 1 && sameList && done.length < TRANSACTION_MAX_ITEMS) {
    const items: NamedItems = done.map((d) => [`email:${d.email.id}`, finishPut(d.email, d.outcome)]);
    if (listId !== null) items.push(['list', listFinished(done[0]!.email.account_id, listId, done.length, false)]);
    if ((await transactNamed(items)).length === 0) return done.map((d) => d.email);
  }
  const finished = await Promise.all(done.map(async (d) => ((await finishEmail(d.email, d.outcome)) ? d.email : undefined)));
  return finished.filter((e): e is EmailRecord => e !== undefined);
}

/** Marks emails as being worked on (visible as `processing`); those already past pending stay as they are. */
export async function markProcessing(emails: EmailRecord[]): Promise<void> {
  await Promise.all(
    emails
      .filter((e) => e.status === 'pending')
      .map((email) =>
        conditionHeld(
          updateItem(
            emailKey(email.account_id, email.id),
            update().set`${attr('status')} = ${'processing'}`.when`${attr('status')} = ${'pending'}`,
          ),
        ),
      ),
  );
}

/** Transaction part: a held email is released for validation. */
export const emailReleased = (email: EmailRecord): TransactItem =>
  txUpdate(emailKey(email.account_id, email.id), update().set`awaiting = ${false}`.when`awaiting = ${true}`);
