import { getEmailList } from '#shared/data/email-lists';
import { finishEmails, getEmails, markProcessing, type EmailRecord, type Outcome } from '#shared/data/emails';
import { validateEmail } from '#shared/email/validator/index';
import { logger } from '#shared/util/logger';

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
 * Validates the emails of one job and records each outcome once: one read
 * for all of them, one write marking them `processing`, and one transaction
 * finishing those of a list together. Returns false when some failed
 * transiently and should be retried (the queue redelivers); on the last
 * attempt those are completed as `error` instead.
 */
export async function processEmails(
  accountId: string,
  emailIds: number[],
  lastAttempt: boolean,
  listExists: (listId: number) => Promise<boolean> = listLookup(accountId),
): Promise<boolean> {
  const found = (await getEmails(accountId, emailIds)).filter(isUnfinished); // deleted, done (a redelivery), or held for credits are skipped
  const live = (
    await Promise.all(found.map(async (e) => (e.email_list_id === null || (await listExists(e.email_list_id)) ? e : undefined)))
  ).filter((e): e is EmailRecord => e !== undefined); // a deleted list's emails are being purged
  if (live.length === 0) return true;
  await markProcessing(live);
  const outcomes = await Promise.all(live.map(async (email) => ({ email, outcome: await validateEmail(email.email) })));
  const done: { email: EmailRecord; outcome: Outcome }[] = [];
  let retry = false;
  for (const { email, outcome } of outcomes) {
    if (outcome.status === 'completed') {
      const { email: _address, ...result } = outcome.result;
      done.push({ email, outcome: { status: 'completed', result } });
    } else if (lastAttempt) {
      done.push({ email, outcome: { status: 'error' } });
    } else {
      logger.warn('validation failed; the queue will retry', { email_id: email.id, email_list_id: email.email_list_id });
      retry = true;
    }
  }
  const byList = new Map<number | null, typeof done>();
  for (const d of done) byList.set(d.email.email_list_id, [...(byList.get(d.email.email_list_id) ?? []), d]);
  await Promise.all([...byList.values()].map((group) => finishEmails(group)));
  return !retry;
}

/** A batch that reached the dead-letter queue: its unfinished emails end as `error`, and so does their list. */
export async function failEmails(accountId: string, emailIds: number[]): Promise<void> {
  const unfinished = (await getEmails(accountId, emailIds)).filter(isUnfinished);
  for (const email of unfinished) await finishEmails([{ email, outcome: { status: 'error', listError: true } }]);
}
