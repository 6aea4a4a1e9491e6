import { endListRound } from '#shared/data/email-lists';
import { logger } from '#shared/util/logger';
import { recordMetric } from '#shared/util/metrics';

/**
 * A list's round of work ends when its last email is finished or, when an
 * import held it, when the import ends; each of those calls this after its
 * write. A round ends once (the write's condition), and its length is the
 * `ListCompletionTime` metric.
 */
export async function endListRounds(lists: { accountId: string; listId: number }[]): Promise<void> {
  for (const { accountId, listId } of lists) {
    const seconds = await endListRound(accountId, listId);
    if (seconds === undefined) continue;
    recordMetric('listCompletionTime', seconds);
    logger.info('email list completed', { list_id: listId, seconds });
  }
}
