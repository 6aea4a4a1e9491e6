import type { Context } from 'aws-lambda';
import { resumeAllAwaiting } from '#shared/email/credits';
import { recoverLostWork } from '#shared/email/recovery';
import { requeueUnfinishedPurges } from '#shared/purge';
import { instrumented } from '#shared/util/invocation';

/** Work stored longer ago than this but still not queued was stranded by a crash. */
export const STRANDED_AFTER_MS = 2 * 60_000;
/** Leave this much of the invocation unused. */
const SAFETY_MS = 10_000;

/**
 * Scheduled: finishes work a crash left between the database and the
 * queue, re-queues unfinished emails whose message was lost, releases work
 * held for credits once the account has them, and re-queues purges of
 * deleted conversations and lists whose chain stopped.
 */
export const handler = instrumented(async (_event?: unknown, context?: Context) => {
  const deadline = Date.now() + (context?.getRemainingTimeInMillis() ?? 60_000) - SAFETY_MS;
  const { settled, requeued } = await recoverLostWork({ strandedAfterMs: STRANDED_AFTER_MS, dueBeforeMs: Date.now(), deadline });
  await resumeAllAwaiting();
  const purges = await requeueUnfinishedPurges();
  return { resent: settled, requeued, purges };
});
