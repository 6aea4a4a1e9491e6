import type { Context } from 'aws-lambda';
import { recordOutcomes, type Done } from '#shared/email/outcomes';
import { listLookup, validateJob } from '#shared/email/processing';
import { parseValidationJob } from '#shared/email/work';
import { queues } from '#shared/queues';
import { worker } from '#shared/util/worker';

/**
 * How long a run validates: at most RUN_MS, and never closer than
 * RECORD_MS to the invocation's end, which recording the batch's outcomes
 * and queueing the unfinished need. The batch's outcomes are recorded
 * together, so a slow mail host must not hold the others past this.
 */
const RUN_MS = 25_000;
const RECORD_MS = 10_000;
const runDeadline = (context: Context | undefined) =>
  Date.now() + Math.max(1_000, Math.min(RUN_MS, (context?.getRemainingTimeInMillis() ?? 60_000) - RECORD_MS));

/**
 * Validates the emails each message names. A message whose emails could not
 * all finish is reported as failed and comes back after the visibility
 * timeout; on its last receive, transient failures are recorded as `error`.
 * Redeliveries are harmless: finished emails are skipped.
 */
export const handler = worker({
  what: 'validation job',
  parse: parseValidationJob,
  maxReceiveCount: queues.validation.maxReceiveCount,
  parallel: true,
  describe: (job) => ({ email_ids: job.emailIds }),
  // Messages of one batch mostly share an account and a list: each list is looked up once.
  setup: () => new Map<string, ReturnType<typeof listLookup>>(),
  each: async (job, delivery, lookups): Promise<Done[]> => {
    const lookup = lookups.get(job.accountId) ?? lookups.set(job.accountId, listLookup(job.accountId)).get(job.accountId)!;
    const { done, retry } = await validateJob(job.accountId, job, delivery.lastAttempt, lookup, runDeadline(delivery.context));
    if (retry) delivery.retryLater();
    return done;
  },
  // The whole batch's outcomes are recorded together: one transaction per list, not one per message.
  after: async (results) => {
    const failed = await recordOutcomes(results.flatMap(({ messageId, result }) => result.map((d) => ({ ...d, messageId }))));
    return failed.flatMap((group) => group.map((d) => d.messageId));
  },
});
