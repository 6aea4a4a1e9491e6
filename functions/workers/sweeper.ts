import { strandedOutboxes } from '#shared/data/outbox';
import { resumeAllAwaiting } from '#shared/email/credits';
import { dispatchOutbox } from '#shared/email/work';
import { requeueUnfinishedPurges } from '#shared/purge';
import { describeError, logger } from '#shared/util/logger';

/** Work stored longer ago than this but still not queued was stranded by a crash. */
export const STRANDED_AFTER_MS = 2 * 60_000;

/**
 * Scheduled: re-sends validation work a crash left between the database and
 * the queue, releases work held for credits once the account has them, and
 * re-queues purges of deleted conversations and lists not yet finished.
 */
export const handler = async (): Promise<{ resent: number; purges: number }> => {
  let resent = 0;
  for (const outbox of await strandedOutboxes(STRANDED_AFTER_MS)) {
    try {
      await dispatchOutbox(outbox);
      resent++;
    } catch (error) {
      logger.error('could not re-send stranded work', { outbox_id: outbox.outbox_id, ...describeError(error) });
    }
  }
  await resumeAllAwaiting();
  const purges = await requeueUnfinishedPurges();
  if (resent) logger.warn('re-sent stranded validation work', { resent });
  return { resent, purges };
};
