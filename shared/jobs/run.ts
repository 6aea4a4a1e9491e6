import { randomUUID } from 'node:crypto';
import { advanceJob, finishJob, handOverJob, jobItem, jobRecordPut, releaseJob } from '#shared/data/jobs';
import { txPut, type TransactItem } from '#shared/db/batch';
import type { Job, JobKind } from '#shared/jobs/kind';
import { JOB_QUEUES, type JobName } from '#shared/jobs/names';
import { queueUrlEnv } from '#shared/queues';
import { describeError, logger } from '#shared/util/logger';
import { requireQueue, sendJson, sendJsonBatch } from '#shared/util/sqs';

/**
 * The durable-job primitive: a job is recorded in the transaction of the
 * change it follows, run inline until the request's deadline, continued
 * from its queue (a run out of time queues the rest for the same chain),
 * and taken up by the sweeper when its chain stopped (shared/jobs/sweep.ts).
 */

/** What a queue message carries: the job's record is read (and claimed) by the worker. */
export interface JobMessage {
  kind: JobName;
  accountId: string;
  subject: string;
  chain: string;
}

/** A new job of `kind`, held from its commit by a new chain: the request's own run. */
export function newJob<P>(kind: JobKind<P>, accountId: string, payload: P): Job<P> {
  return { kind: kind.name, accountId, subject: kind.subject(payload), payload, cursor: 0, createdMs: Date.now(), chain: randomUUID() };
}

/** The transaction part that records the job with its change: from then on the work is done however the request ends. */
export const jobPut = (job: Job<unknown>): TransactItem => jobRecordPut(job, job.chain);

/** The transaction part that records the job with its change, held by no chain and due at `dueMs`: the sweeper starts it. */
export const jobDuePut = (job: Job<unknown>, dueMs: number): TransactItem => txPut(jobItem(job, { dueMs }));

export const messageOf = (job: JobMessage): JobMessage => ({
  kind: job.kind,
  accountId: job.accountId,
  subject: job.subject,
  chain: job.chain,
});

const queueUrl = (kind: JobName) => {
  const env = queueUrlEnv(JOB_QUEUES[kind]);
  return requireQueue(process.env[env], env);
};

export const enqueueJob = (job: JobMessage) => sendJson(queueUrl(job.kind), messageOf(job));

/** The longest delay SQS gives a message. */
const MAX_DELAY_SECONDS = 900;

/** Seconds until `dueMs`, when SQS can delay a message that long (at most 15 minutes). */
function delayUntil(dueMs: number): number | undefined {
  const seconds = Math.max(0, Math.ceil((dueMs - Date.now()) / 1000));
  return seconds <= MAX_DELAY_SECONDS ? seconds : undefined;
}

/**
 * A new job held by no chain and due within the queue's reach is queued
 * for then, for a new chain (a record no chain holds is claimed by any): it
 * runs when due, not at the sweeper's next pass after that. If the send
 * fails, the sweeper takes it up when due; if both bring it, the one that
 * claims it second finds it held and stops, and the first hands it on
 * (`later`), so two chains never go on side by side.
 */
export async function enqueueWhenDue(job: JobMessage, dueMs: number): Promise<void> {
  const delaySeconds = delayUntil(dueMs);
  if (delaySeconds !== undefined) await sendDelayed({ ...job, chain: randomUUID() }, delaySeconds);
}

/** Queues the job's message for `chain` after `delaySeconds`; false (logged) when the send failed and the sweeper must bring it. */
async function sendDelayed(job: JobMessage, delaySeconds: number): Promise<boolean> {
  try {
    await sendJsonBatch(queueUrl(job.kind), [messageOf(job)], delaySeconds);
    return true;
  } catch (error) {
    logger.warn('job left to the sweeper until due', { ...described(job), ...describeError(error) });
    return false;
  }
}

/**
 * A job whose step asks to run again at `dueMs`: within the queue's reach,
 * it is handed to a new chain whose message is queued for then (the record
 * held by that chain, so neither the sweeper nor a late duplicate starts
 * another beside it); beyond it, or if the send fails, it is let go, due
 * then, for the sweeper. No chain waits for it meanwhile.
 */
async function later(job: Job<unknown>, dueMs: number): Promise<void> {
  const delaySeconds = delayUntil(dueMs);
  if (delaySeconds === undefined) return releaseJob(job, job.chain, dueMs);
  const next = randomUUID();
  // Not handed over: another chain holds it now and carries on.
  if (!(await handOverJob(job, job.chain, next, dueMs))) return;
  if (!(await sendDelayed({ ...job, chain: next }, delaySeconds))) await releaseJob(job, next, dueMs).catch(() => undefined);
}

/** Queues jobs on their kinds' queues, ten to a call. */
export async function enqueueJobs(jobs: JobMessage[]): Promise<void> {
  for (const [url, group] of Map.groupBy(jobs, (job) => queueUrl(job.kind))) await sendJsonBatch(url, group.map(messageOf));
}

/**
 * Runs steps until the job is done or the deadline (epoch ms) has passed:
 * 'more' when work remains, 'lost' when another chain took the job over
 * (it carries on, this chain stops).
 */
export async function runJob<P>(kind: JobKind<P>, job: Job<P>, deadline: number): Promise<'done' | 'more' | 'lost' | 'later'> {
  for (;;) {
    const step = await kind.step(job, deadline);
    if (step.cursor !== undefined) {
      if (!(await advanceJob(job, job.chain, step.cursor))) return 'lost';
      job.cursor = step.cursor;
    }
    if (step.againAtMs !== undefined && !step.done) {
      // (A purge done before its settle time is only released: its record is all that is left to drop, which the
      // sweeper does, and every delete would pay a queue send for it.)
      await later(job, step.againAtMs);
      return 'later';
    }
    if (step.done) {
      const settled = job.createdMs + (kind.settleMs ?? 0);
      if (Date.now() < settled) await releaseJob(job, job.chain, settled);
      else await finishJob(job, job.chain, kind.keep ?? false);
      return 'done';
    }
    if (Date.now() > deadline) return 'more';
  }
}

const described = (job: JobMessage) => ({ job: messageOf(job) });

/** Runs a just committed job inline until the deadline, then hands the rest to its queue (or, failing that, to the sweeper). */
export async function startJob<P>(kind: JobKind<P>, job: Job<P>, deadline: number): Promise<void> {
  // The change is committed with its record: whatever stops the inline run, the queue or the sweeper finishes the job.
  const outcome = await runJob(kind, job, deadline).catch((error) => {
    logger.warn('inline job run stopped', { ...described(job), ...describeError(error) });
    return 'more' as const;
  });
  if (outcome !== 'more') return;
  logger.info('job continues asynchronously', described(job));
  await enqueueJob(job).catch(async (error) => {
    logger.warn('job queueing deferred to the sweeper', { ...described(job), ...describeError(error) });
    // Due now rather than when the lease ends; if this fails too, the lease's end brings it back all the same.
    await releaseJob(job, job.chain, Date.now()).catch(() => undefined);
  });
}
