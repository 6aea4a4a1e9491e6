import * as v from 'valibot';
import { claimJob, finishJob, recordFailedRun } from '#shared/data/jobs';
import { parseItem } from '#shared/db/item-schema';
import { MAX_FAILED_RUNS, type Job, type JobKind } from '#shared/jobs/kind';
import { isJobName, JOB_NAMES } from '#shared/jobs/names';
import { enqueueJob, runJob, type JobMessage } from '#shared/jobs/run';
import { describeError, logger } from '#shared/util/logger';
import { parseMessage } from '#shared/util/message-schema';
import { worker } from '#shared/util/worker';

/** Leave this much of the invocation for queueing the rest. */
const SAFETY_MS = 5_000;

// Built in a /* @__PURE__ */ call, as the other schemas (shared/db/item-schema.ts).
const jobMessage = /* @__PURE__ */ (() =>
  v.strictObject({ kind: v.picklist(JOB_NAMES), accountId: v.string(), subject: v.string(), chain: v.string() }))();

export const parseJobMessage = (body: string): JobMessage | undefined => parseMessage(jobMessage, body);

/**
 * The worker of a job queue: each message names a job and the chain it
 * continues; the worker claims the job's record for that chain (a finished
 * job, or one another chain holds, is left alone), runs the record's kind
 * until done or out of time, and queues the rest for the same chain.
 */
// The kinds' payload types differ; each is checked against its own schema before its step sees it.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function jobWorker(kinds: readonly JobKind<any>[]) {
  const byName = new Map(kinds.map((kind) => [kind.name, kind]));
  return worker({
    what: 'job',
    parse: parseJobMessage,
    describe: (message) => ({ ...message }),
    each: async (message, delivery) => {
      const deadline = Date.now() + (delivery.context?.getRemainingTimeInMillis() ?? 60_000) - SAFETY_MS;
      const record = await claimJob(message, message.chain);
      if (!record) return;
      // The record decides (a retraction takes its delivery's record over). One this queue does not run fails loudly;
      // when the lease ends, the sweeper queues it by its own kind.
      const kind = isJobName(record.kind) ? byName.get(record.kind) : undefined;
      if (!kind) throw new Error(`no worker here runs ${record.kind} jobs`);
      const job = { ...record, kind: kind.name, payload: parseItem(kind.payload, record.payload), chain: message.chain };
      let outcome: Awaited<ReturnType<typeof runJob>>;
      try {
        outcome = await runJob(kind, job, deadline);
      } catch (error) {
        if (await gaveUp(kind, job, error)) return;
        throw error;
      }
      if (outcome === 'more') await enqueueJob(job);
    },
  });
}

/** After a failed run: whether the job, failing MAX_FAILED_RUNS in a row, was given up (its kind told, its record finished). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function gaveUp(kind: JobKind<any>, job: Job<unknown>, error: unknown): Promise<boolean> {
  if (!kind.giveUp) return false;
  const failures = await recordFailedRun(job, job.chain).catch(() => undefined);
  if (failures === undefined || failures < MAX_FAILED_RUNS) return false;
  logger.error('job given up after failing runs', { job: { kind: job.kind, subject: job.subject }, failures, ...describeError(error) });
  await kind.giveUp(job, error);
  await finishJob(job, job.chain, kind.keep ?? false);
  return true;
}
