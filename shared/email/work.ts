import * as v from 'valibot';
import { config } from '#shared/config';
import { parseMessage } from '#shared/util/message-schema';
import { requireQueue, sendJsonBatch } from '#shared/util/sqs';

/** One queue message names up to this many emails of one account. */
export const EMAILS_PER_MESSAGE = 10;

export interface ValidationJob {
  accountId: string;
  emailIds: number[];
  /**
   * Each email's address, sequence number and creation time (in the order of
   * `emailIds`) and their list: the worker then records outcomes without
   * reading the emails first.
   */
  addresses?: string[];
  seqs?: number[];
  createdAt?: number[];
  listId?: number | null;
  /** How many times these emails were put back because their mail host answered only temporarily (greylisting). */
  deferrals?: number;
}

/** An email to validate: its id, and when known what the worker needs to record its outcome unread. */
export interface Work {
  id: number;
  known?: { address: string; seq: number; createdAt: number; listId: number | null };
}

/**
 * Puts emails of one account on the validation queue, EMAILS_PER_MESSAGE of one list to a message.
 * `later`: emails put back after a temporary SMTP answer, delivered after `delaySeconds`.
 */
export async function enqueueValidation(
  accountId: string,
  work: Work[],
  later?: { delaySeconds: number; deferrals: number },
): Promise<void> {
  const groups = Map.groupBy(work, (w) => (w.known ? String(w.known.listId) : 'unknown'));
  const jobs: ValidationJob[] = [];
  for (const [group, items] of groups) {
    for (let i = 0; i < items.length; i += EMAILS_PER_MESSAGE) {
      const slice = items.slice(i, i + EMAILS_PER_MESSAGE);
      const known = slice.map((w) => w.known!);
      jobs.push({
        accountId,
        emailIds: slice.map((w) => w.id),
        ...(group === 'unknown'
          ? {}
          : {
              addresses: known.map((k) => k.address),
              seqs: known.map((k) => k.seq),
              createdAt: known.map((k) => k.createdAt),
              listId: known[0]!.listId,
            }),
        ...(later ? { deferrals: later.deferrals } : {}),
      });
    }
  }
  if (jobs.length) await sendJsonBatch(requireQueue(config().validationQueueUrl, 'VALIDATION_QUEUE_URL'), jobs, later?.delaySeconds);
}

/** What the worker needs of a stored email, from the email itself. */
export const workOf = (e: { id: number; email: string; seq: number; created_at: number; email_list_id: number | null }): Work => ({
  id: e.id,
  known: { address: e.email, seq: e.seq, createdAt: e.created_at, listId: e.email_list_id },
});

const int = () => v.pipe(v.number(), v.safeInteger());

// Built in a /* @__PURE__ */ call, as the other schemas (shared/db/item-schema.ts).
const validationJob = /* @__PURE__ */ (() =>
  v.pipe(
    v.object({
      accountId: v.string(),
      emailIds: v.pipe(v.array(int()), v.minLength(1), v.maxLength(EMAILS_PER_MESSAGE)),
      addresses: v.optional(v.array(v.string())),
      seqs: v.optional(v.array(int())),
      createdAt: v.optional(v.array(int())),
      listId: v.optional(v.nullable(int())),
      deferrals: v.optional(v.pipe(int(), v.minValue(0), v.maxValue(100))),
    }),
    // What the worker needs to record outcomes unread comes whole, one entry per email, or not at all.
    v.check(
      (job) =>
        job.addresses === undefined ||
        (job.listId !== undefined && [job.addresses, job.seqs, job.createdAt].every((values) => values?.length === job.emailIds.length)),
    ),
  ))();

/** A queue message as a validation job; undefined for a malformed one (the worker logs and drops it). */
export const parseValidationJob = (body: string): ValidationJob | undefined => parseMessage(validationJob, body);
