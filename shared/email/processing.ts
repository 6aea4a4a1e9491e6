import { endListRound, getEmailList } from '#shared/data/email-lists';
import { finishEmails, getEmails, markProcessing, type EmailRecord, type Outcome } from '#shared/data/emails';
import { validateEmail } from '#shared/email/validator/index';
import type { ValidationJob } from '#shared/email/work';
import type { ValidationOutcome } from '#shared/email/result';
import { describeError, logger } from '#shared/util/logger';
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
 * The job names each email's address and list: no read needed. An email
 * deleted or finished meanwhile, or one of a deleted list, then fails the
 * completion's condition and nothing is written for it.
 */
const fromJob = (accountId: string, job: ValidationJob): EmailRecord[] =>
  job.emailIds.map((id, i) => ({
    id,
    account_id: accountId,
    email: job.addresses![i]!,
    email_list_id: job.listId ?? null,
    status: 'pending',
    awaiting: false,
    seq: job.seqs![i]!,
    result: null,
    created_at: job.createdAt![i]!,
  }));

/** Otherwise: read them, and skip the deleted, the finished (a redelivery), those held for credits, and a deleted list's. */
async function unfinishedOf(accountId: string, ids: number[], listExists: (listId: number) => Promise<boolean>) {
  const found = (await getEmails(accountId, ids)).filter(isUnfinished);
  return (
    await Promise.all(found.map(async (e) => (e.email_list_id === null || (await listExists(e.email_list_id)) ? e : undefined)))
  ).filter((e): e is EmailRecord => e !== undefined);
}

/** Emails still being validated after this long are marked `processing` while the worker holds them. */
export const PROCESSING_AFTER_MS = 250;

export type Done = { email: EmailRecord; outcome: Outcome };

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
 * Validates the emails of one job. Returns the outcomes to record, and
 * whether some failed transiently and should be retried (the queue
 * redelivers); on the last attempt those are recorded as `error` instead.
 */
export async function validateJob(
  accountId: string,
  job: ValidationJob,
  lastAttempt: boolean,
  listExists: (listId: number) => Promise<boolean> = listLookup(accountId),
): Promise<{ done: Done[]; retry: boolean }> {
  const live =
    job.addresses && job.seqs && job.createdAt ? fromJob(accountId, job) : await unfinishedOf(accountId, job.emailIds, listExists);
  if (live.length === 0) return { done: [], retry: false };
  // Most validations end within milliseconds (cached DNS): only a slow one is worth a write to show `processing`.
  let marking: Promise<void> | undefined;
  const slow = setTimeout(() => (marking = markProcessing(live)), PROCESSING_AFTER_MS);
  const outcomes = await Promise.all(live.map(async (email) => ({ email, outcome: await validateEmail(email.email) })));
  clearTimeout(slow);
  await marking;
  const done: Done[] = [];
  let retry = false;
  for (const { email, outcome } of outcomes) {
    reportValidation(email, outcome, !lastAttempt);
    if (outcome.status === 'completed') {
      const { email: _address, ...result } = outcome.result;
      done.push({ email, outcome: { status: 'completed', result } });
    } else if (lastAttempt) {
      done.push({ email, outcome: { status: 'error' } });
    } else {
      retry = true;
    }
  }
  return { done, retry };
}

/** One transaction holds this many finished emails beside their list's counter. */
const FINISHED_PER_TRANSACTION = 99;

/**
 * Records outcomes (of several jobs at once): grouped by list, each group in
 * as few transactions as fit, one counter change each. Resolves to the
 * groups that failed, so their jobs can be retried.
 */
export async function recordOutcomes<T extends Done>(done: T[]): Promise<T[][]> {
  const byList = new Map<number | null, T[]>();
  for (const d of done) byList.set(d.email.email_list_id, [...(byList.get(d.email.email_list_id) ?? []), d]);
  const groups = [...byList.values()].flatMap((group) => {
    const size = Math.ceil(group.length / Math.ceil(group.length / FINISHED_PER_TRANSACTION));
    return Array.from({ length: Math.ceil(group.length / size) }, (_, i) => group.slice(i * size, (i + 1) * size));
  });
  const failed: T[][] = [];
  const finishedLists = new Set<number>();
  await Promise.all(
    groups.map(async (group) => {
      try {
        const finished = await finishEmails(group);
        for (const email of finished) if (email.email_list_id !== null) finishedLists.add(email.email_list_id);
      } catch (error) {
        logger.warn('could not record validation outcomes', { email_ids: group.map((d) => d.email.id), ...describeError(error) });
        failed.push(group);
      }
    }),
  );
  const accountOf = new Map(done.map((d) => [d.email.email_list_id, d.email.account_id]));
  await endListRounds([...finishedLists].map((listId) => ({ accountId: accountOf.get(listId)!, listId })));
  return failed;
}

/** After outcomes are recorded: each list they finished emails of may now be complete; record how long its round of work took. */
export async function endListRounds(lists: { accountId: string; listId: number }[]): Promise<void> {
  for (const { accountId, listId } of lists) {
    const seconds = await endListRound(accountId, listId);
    if (seconds === undefined) continue;
    recordMetric('listCompletionTime', seconds);
    logger.info('email list completed', { list_id: listId, seconds });
  }
}

/** A batch that reached the dead-letter queue: its unfinished emails end as `error`, and so does their list. */
export async function failEmails(accountId: string, emailIds: number[]): Promise<void> {
  const unfinished = (await getEmails(accountId, emailIds)).filter(isUnfinished);
  const finishedLists = new Set<number>();
  for (const email of unfinished) {
    countMetric('emailsErrored');
    logger.warn('validation dead-lettered; recorded as error', { email_id: email.id, list_id: email.email_list_id });
    const [finished] = await finishEmails([{ email, outcome: { status: 'error', listError: true } }]);
    if (finished && email.email_list_id !== null) finishedLists.add(email.email_list_id);
  }
  await endListRounds([...finishedLists].map((listId) => ({ accountId, listId })));
}
