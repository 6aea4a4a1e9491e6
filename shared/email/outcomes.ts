import { finishEmails, type Outcome } from '#shared/data/email-status';
import { getEmails, type EmailRecord } from '#shared/data/emails';
import { describeError, logger } from '#shared/util/logger';
import { countMetric } from '#shared/util/metrics';
import { endListRounds } from '#shared/email/list-rounds';

/*
 * Recording how validations ended, apart from validating (processing.ts):
 * the dead-letter worker imports this and never reaches the validator.
 */

export const isUnfinished = (e: EmailRecord) => (e.status === 'pending' || e.status === 'processing') && !e.awaiting;

export type Done = { email: EmailRecord; outcome: Outcome };

/** One transaction holds this many finished emails beside their list's counter. */
const FINISHED_PER_TRANSACTION = 99;

/**
 * Records outcomes (of several jobs at once): grouped by list, each group in
 * as few transactions as fit, one counter change each. Resolves to the
 * groups that failed, so their jobs can be retried.
 */
export async function recordOutcomes<T extends Done>(done: T[]): Promise<T[][]> {
  const groups = [...Map.groupBy(done, (d) => d.email.email_list_id).values()].flatMap((group) => {
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
