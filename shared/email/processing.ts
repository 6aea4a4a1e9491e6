import { endListRound, getEmailList } from '#shared/data/email-lists';
import { finishEmail, getEmail, markProcessing, type EmailRecord } from '#shared/data/emails';
import type { ValidationOutcome } from '#shared/email/result';
import { validateEmail } from '#shared/email/validator/index';
import { logger } from '#shared/util/logger';
import { countMetric, recordMetric } from '#shared/util/metrics';

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
 * Logs what an operator needs from one validation (ids only, never the
 * address) and counts it by outcome; `willRetry` says whether a transient
 * failure goes back to the queue or is recorded as `error`.
 */
export function reportValidation(email: EmailRecord, outcome: ValidationOutcome, willRetry: boolean): void {
  const ids = { email_id: email.id, list_id: email.email_list_id };
  if (outcome.status === 'completed') {
    countMetric(outcome.result.is_valid ? 'emailsValid' : 'emailsInvalid');
    if (outcome.problems) logger.warn('validation completed with unreachable mail hosts', { ...ids, problems: outcome.problems });
    return;
  }
  countMetric(willRetry ? 'emailsRetried' : 'emailsErrored');
  logger.warn(willRetry ? 'validation failed; it will be retried' : 'validation failed on its last attempt; recorded as error', {
    ...ids,
    reason: outcome.reason,
  });
}

/**
 * Validates one email and records the outcome once. Returns false when the
 * validation failed transiently and should be retried (the queue redelivers);
 * on the last attempt such an email is completed as `error` instead. Lists
 * whose emails it finished are added to `finishedLists`.
 */
export async function processEmail(
  accountId: string,
  emailId: number,
  lastAttempt: boolean,
  listExists: (listId: number) => Promise<boolean> = listLookup(accountId),
  finishedLists: Set<number> = new Set(),
): Promise<boolean> {
  const email = await getEmail(accountId, emailId);
  if (!email || !isUnfinished(email)) return true; // deleted, already done (a redelivery), or waiting for credits
  if (email.email_list_id !== null && !(await listExists(email.email_list_id))) return true; // list being purged
  await markProcessing(email);
  const outcome = await validateEmail(email.email);
  reportValidation(email, outcome, !lastAttempt);
  let finished: boolean;
  if (outcome.status === 'completed') {
    const { email: _address, ...result } = outcome.result;
    finished = await finishEmail(email, { status: 'completed', result });
  } else if (!lastAttempt) {
    return false;
  } else {
    finished = await finishEmail(email, { status: 'error' });
  }
  if (finished && email.email_list_id !== null) finishedLists.add(email.email_list_id);
  return true;
}

/** A batch that reached the dead-letter queue: its unfinished emails end as `error`, and so does their list. */
export async function failEmails(accountId: string, emailIds: number[]): Promise<void> {
  const finishedLists = new Set<number>();
  for (const id of emailIds) {
    const email = await getEmail(accountId, id);
    if (!email || !isUnfinished(email)) continue;
    countMetric('emailsErrored');
    logger.warn('validation dead-lettered; recorded as error', { email_id: email.id, list_id: email.email_list_id });
    if ((await finishEmail(email, { status: 'error', listError: true })) && email.email_list_id !== null) {
      finishedLists.add(email.email_list_id);
    }
  }
  await endListRounds(accountId, finishedLists);
}

/** After a job: each list it finished emails of may now be complete; record how long its round of work took. */
export async function endListRounds(accountId: string, listIds: Iterable<number>): Promise<void> {
  for (const listId of listIds) {
    const seconds = await endListRound(accountId, listId);
    if (seconds === undefined) continue;
    recordMetric('listCompletionTime', seconds);
    logger.info('email list completed', { list_id: listId, seconds });
  }
}
