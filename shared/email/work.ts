import { config } from '#shared/config';
import { deleteOutbox, type OutboxItem } from '#shared/data/outbox';
import { requireQueue, sendJsonBatch } from '#shared/util/sqs';

/** One queue message names up to this many emails of one account. */
export const EMAILS_PER_MESSAGE = 10;

export interface ValidationJob {
  accountId: string;
  emailIds: number[];
}

/** Puts an outbox's emails on the validation queue, then drops the outbox (the sweeper re-sends it if this fails). */
export async function dispatchOutbox(outbox: OutboxItem, only?: number[]): Promise<void> {
  const ids = only ?? outbox.email_ids;
  const jobs: ValidationJob[] = [];
  for (let i = 0; i < ids.length; i += EMAILS_PER_MESSAGE) {
    jobs.push({ accountId: outbox.account_id, emailIds: ids.slice(i, i + EMAILS_PER_MESSAGE) });
  }
  if (jobs.length) await sendJsonBatch(requireQueue(config().validationQueueUrl, 'VALIDATION_QUEUE_URL'), jobs);
  await deleteOutbox(outbox);
}

export function parseValidationJob(body: string): ValidationJob | undefined {
  try {
    const job = JSON.parse(body) as ValidationJob;
    const ok =
      typeof job.accountId === 'string' &&
      Array.isArray(job.emailIds) &&
      job.emailIds.length > 0 &&
      job.emailIds.every((id) => Number.isSafeInteger(id));
    return ok ? job : undefined;
  } catch {
    return undefined;
  }
}
