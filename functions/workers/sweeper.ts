import { strandedOutboxes } from '#shared/data/outbox';
import { resumeAllAwaiting } from '#shared/email/credits';
import { dispatchOutbox } from '#shared/email/work';
import { requeueUnfinishedPurges } from '#shared/purge';
import { instrumented } from '#shared/util/invocation';
import { describeError, logger } from '#shared/util/logger';

/** Work stored longer ago than this but still not queued was stranded by a crash. */
export const STRANDED_AFTER_MS = 2 * 60_000;

/**
 * Scheduled: re-sends validation work a crash left between the database and
 * the queue, releases work held for credits once the account has them, and
 * re-queues purges of deleted conversations and lists not yet finished.
 */
export const handler = instrumented(async (): Promise<{ resent: number; purges: number }> => {
  let resent = 0;
  for (const outbox of await strandedOutboxes(STRANDED_AFTER_MS)) {
    try {
      await dispatchOutbox(outbox);
      resent++;
    } catch (error) {
      logger.warn('could not re-send stranded work; the next run tries again', {
        outbox_id: outbox.outbox_id,
        email_ids: outbox.email_ids,
        ...describeError(error),
      });
    }
  }
  await resumeAllAwaiting();
  const purges = await requeueUnfinishedPurges();
  if (resent) logger.warn('re-sent stranded validation work', { resent });
  return { resent, purges };
});
