import type { Context } from 'aws-lambda';
import { recoverLostWork, resumeAllAwaiting, STRANDED_AFTER_MS } from '#shared/email/outbox';
import { sweepUnattachedFiles } from '#shared/files/release';
import { requeueDueJobs } from '#shared/jobs/sweep';
import { instrumented } from '#shared/util/invocation';
import { describeError, logger } from '#shared/util/logger';

/** Leave this much of the invocation unused. */
const SAFETY_MS = 10_000;

/** Each job runs on its own: one that throws is logged and the others still run. */
async function isolated<T>(job: string, run: () => Promise<T>): Promise<T | undefined> {
  try {
    return await run();
  } catch (error) {
    logger.error('sweeper job failed', { job, ...describeError(error) });
    return undefined;
  }
}

/**
 * Scheduled: finishes work a crash left between the database and the
 * queue, re-queues unfinished emails whose message was lost, releases work
 * held for credits once the account has them, and re-queues the durable
 * jobs (deliveries, purges) whose chain stopped, and deletes uploads
 * never attached once their 24 h are up.
 */
export const handler = instrumented(async (_event?: unknown, context?: Context) => {
  const deadline = Date.now() + (context?.getRemainingTimeInMillis() ?? 60_000) - SAFETY_MS;
  const recovered = await isolated('recover', () =>
    recoverLostWork({ strandedAfterMs: STRANDED_AFTER_MS, dueBeforeMs: Date.now(), deadline }),
  );
  await isolated('release', () => resumeAllAwaiting());
  const jobs = await isolated('jobs', () => requeueDueJobs());
  const files = await isolated('files', () => sweepUnattachedFiles());
  return { resent: recovered?.settled, requeued: recovered?.requeued, jobs, files };
});
