import { getEmailList } from '#shared/data/email-lists';
import { markProcessing } from '#shared/data/email-status';
import { getEmails, pendingEmail, type EmailRecord } from '#shared/data/emails';
import { isUnfinished, type Done } from '#shared/email/outcomes';
import { validateEmail, validatorConfig } from '#shared/email/validator/index';
import { enqueueValidation, workOf, type ValidationJob } from '#shared/email/work';
import type { ValidationOutcome } from '#shared/email/result';
import { logger } from '#shared/util/logger';
import { countMetric } from '#shared/util/metrics';

// Recording outcomes lives apart (outcomes.ts): the dead-letter worker records failures without loading the validator.

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
 * The job names each email's address and list: no read needed. An email
 * deleted or finished meanwhile, or one of a deleted list, then fails the
 * completion's condition and nothing is written for it.
 */
const fromJob = (accountId: string, job: ValidationJob): EmailRecord[] =>
  job.emailIds.map((id, i) =>
    pendingEmail({
      id,
      accountId,
      address: job.addresses![i]!,
      listId: job.listId ?? null,
      seq: job.seqs![i]!,
      createdAt: job.createdAt![i]!,
      awaiting: false,
    }),
  );

/** Otherwise: read them, and skip the deleted, the finished (a redelivery), those held for credits, and a deleted list's. */
async function unfinishedOf(accountId: string, ids: number[], listExists: (listId: number) => Promise<boolean>) {
  const found = (await getEmails(accountId, ids)).filter(isUnfinished);
  return (
    await Promise.all(found.map(async (e) => (e.email_list_id === null || (await listExists(e.email_list_id)) ? e : undefined)))
  ).filter((e): e is EmailRecord => e !== undefined);
}

/** Emails still being validated after this long are marked `processing` while the worker holds them. */
export const PROCESSING_AFTER_MS = 250;

/**
 * Logs what an operator needs from one validation (ids only, never the
 * address) and counts it by outcome; `willRetry` says whether a transient
 * failure goes back to the queue or is recorded as `error`.
 */
export function reportValidation(email: EmailRecord, outcome: ValidationOutcome, willRetry: boolean): void {
  const ids = { email_id: email.id, list_id: email.email_list_id };
  if (outcome.status === 'completed') {
    countMetric(outcome.result.is_valid ? 'emailsValid' : 'emailsInvalid');
    if (outcome.problems) logger.warn('validation completed with problems on the way', { ...ids, problems: outcome.problems });
    return;
  }
  if (outcome.status === 'deferred') {
    logger.info('the mail host answered temporarily; the address is asked again later', { ...ids, reason: outcome.reason });
    return;
  }
  countMetric(willRetry ? 'emailsRetried' : 'emailsErrored');
  logger.warn(willRetry ? 'validation failed; it will be retried' : 'validation failed on its last attempt; recorded as error', {
    ...ids,
    reason: outcome.reason,
  });
}

/**
 * Validates the emails of one job until `deadline` (ms). Returns the
 * outcomes to record, and whether some failed transiently and should be
 * retried (the queue redelivers); on the last attempt those are recorded
 * as `error` instead. An email whose validation is still running at the
 * deadline (a mail host answering slowly, with many addresses queued for
 * its few sessions) is put back on the queue as a new message, which costs
 * it no attempt: what finished is recorded now, and the rest goes on in
 * the next run, until SMTP_RETRY_GIVE_UP_SECONDS after it was added, when
 * it counts as a failed attempt like any other.
 */
export async function validateJob(
  accountId: string,
  job: ValidationJob,
  lastAttempt: boolean,
  listExists: (listId: number) => Promise<boolean> = listLookup(accountId),
  deadline?: number,
): Promise<{ done: Done[]; retry: boolean }> {
  const live =
    job.addresses && job.seqs && job.createdAt ? fromJob(accountId, job) : await unfinishedOf(accountId, job.emailIds, listExists);
  if (live.length === 0) return { done: [], retry: false };
  // Most validations end within milliseconds (cached DNS): only a slow one is worth a write to show `processing`.
  let marking: Promise<void> | undefined;
  const slow = setTimeout(() => (marking = markProcessing(live)), PROCESSING_AFTER_MS);
  const outcomes = await Promise.all(live.map(async (email) => ({ email, outcome: await validateEmail(email.email, { deadline }) })));
  clearTimeout(slow);
  await marking;
  const done: Done[] = [];
  const deferred: EmailRecord[] = [];
  const unfinished: EmailRecord[] = [];
  let retry = false;
  const nowSeconds = Math.floor(Date.now() / 1000);
  const { smtpRetryGiveUpSeconds } = validatorConfig();
  for (const { email, outcome } of outcomes) {
    if (outcome.status === 'error' && outcome.unfinished && nowSeconds - email.created_at < smtpRetryGiveUpSeconds) {
      unfinished.push(email);
      continue;
    }
    reportValidation(email, outcome, !lastAttempt);
    if (outcome.status === 'deferred' && nowSeconds - email.created_at < smtpRetryGiveUpSeconds) {
      deferred.push(email);
    } else if (outcome.status === 'completed' || outcome.status === 'deferred') {
      // A deferred one here has waited long enough: recorded as it stands, deliverability `unknown`.
      const { email: _address, ...result } = outcome.result;
      done.push({ email, outcome: { status: 'completed', result } });
    } else if (lastAttempt) {
      done.push({ email, outcome: { status: 'error' } });
    } else {
      retry = true;
    }
  }
  if (deferred.length) await deferValidation(accountId, deferred, job.deferrals ?? 0, nowSeconds);
  if (unfinished.length) {
    logger.info("validations still running at the run's deadline go on in a new message", { email_ids: unfinished.map((e) => e.id) });
    await enqueueValidation(accountId, unfinished.map(workOf), { delaySeconds: 0, deferrals: job.deferrals ?? 0 });
  }
  return { done, retry };
}

/**
 * Greylisting and other temporary SMTP answers: the emails go back on the
 * queue as a new message delayed SMTP_RETRY_FIRST_SECONDS, doubling with each
 * deferral (SQS delays at most 900 s), never past the give-up time; the
 * attempt after that records what it finds. A failed send throws, so the
 * queue redelivers the whole job.
 */
async function deferValidation(accountId: string, emails: EmailRecord[], deferrals: number, nowSeconds: number): Promise<void> {
  const { smtpRetryFirstSeconds, smtpRetryGiveUpSeconds } = validatorConfig();
  const oldest = Math.min(...emails.map((e) => e.created_at));
  const left = Math.max(1, smtpRetryGiveUpSeconds - (nowSeconds - oldest));
  const delaySeconds = Math.min(900, left, smtpRetryFirstSeconds * 2 ** Math.min(deferrals, 10));
  await enqueueValidation(accountId, emails.map(workOf), { delaySeconds, deferrals: deferrals + 1 });
}
