import { randomUUID } from 'node:crypto';
import { dueJobs, releaseHeldJob } from '#shared/data/jobs';
import { isJobName } from '#shared/jobs/names';
import { enqueueJobs, type JobMessage } from '#shared/jobs/run';
import { logger } from '#shared/util/logger';

/**
 * The sweeper's pass over durable jobs: those past due (their chain died
 * after the commit, stalled, or could not queue the rest; a purge that
 * waited out its settle time) are queued again, each for a new chain, so a
 * stalled chain's late message finds the lease taken and stops.
 */
export async function requeueDueJobs(): Promise<number> {
  const jobs: JobMessage[] = [];
  for (const job of await dueJobs(Date.now())) {
    if (isJobName(job.kind)) jobs.push({ ...job, kind: job.kind, chain: randomUUID() });
    else logger.error('job of an unknown kind left on record', { ...job });
  }
  await enqueueJobs(jobs);
  return jobs.length;
}

/**
 * After a restart of `npm start` (every chain died with its process, and
 * the local queue starts empty): each unfinished job is let go and queued
 * again at once, rather than waiting out the dead chain's lease. Running a
 * job early changes nothing (each step is repeatable). Bounded: a local
 * table holds a few unfinished jobs, not thousands.
 */
export async function recoverJobsAfterRestart(max = 1_000): Promise<number> {
  const held = await dueJobs(Number.MAX_SAFE_INTEGER, max);
  for (const job of held) await releaseHeldJob(job);
  return requeueDueJobs();
}
