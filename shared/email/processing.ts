import { getEmailList } from '#shared/data/email-lists';
import { finishEmail, getEmail, markProcessing, type EmailRecord } from '#shared/data/emails';
import { validateEmail } from '#shared/email/validator/index';

const isUnfinished = (e: EmailRecord) => (e.status === 'pending' || e.status === 'processing') && !e.awaiting;

/** Whether a list exists, read once per list however many of its emails ask (the emails of one job share a list). */
export function listLookup(accountId: string): (listId: number) => Promise<boolean> {
  const seen = new Map<number, Promise<boolean>>();
  return (listId) => {
    let exists = seen.get(listId);
    if (!exists) {
      exists = getEmailList(accountId, listId).then(Boolean);
      seen.set(listId, exists);
    }
    return exists;
  };
}

/**
 * Validates one email and records the outcome once. Returns false when the
 * validation failed transiently and should be retried (the queue redelivers);
 * on the last attempt such an email is completed as `error` instead.
 */
export async function processEmail(
  accountId: string,
  emailId: number,
  lastAttempt: boolean,
  listExists: (listId: number) => Promise<boolean> = listLookup(accountId),
): Promise<boolean> {
  const email = await getEmail(accountId, emailId);
  if (!email || !isUnfinished(email)) return true; // deleted, already done (a redelivery), or waiting for credits
  if (email.email_list_id !== null && !(await listExists(email.email_list_id))) return true; // list being purged
  await markProcessing(email);
  const outcome = await validateEmail(email.email);
  if (outcome.status === 'completed') {
    const { email: _address, ...result } = outcome.result;
    await finishEmail(email, { status: 'completed', result });
    return true;
  }
  if (!lastAttempt) return false;
  await finishEmail(email, { status: 'error' });
  return true;
}

/** A batch that reached the dead-letter queue: its unfinished emails end as `error`, and so does their list. */
export async function failEmails(accountId: string, emailIds: number[]): Promise<void> {
  for (const id of emailIds) {
    const email = await getEmail(accountId, id);
    if (email && isUnfinished(email)) await finishEmail(email, { status: 'error', listError: true });
  }
}
