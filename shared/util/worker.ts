import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { instrumented } from '#shared/util/invocation';
import { describeError, logger } from '#shared/util/logger';

/** One received message, as a worker's record handler sees it. */
export interface Delivery {
  messageId: string;
  /** The queue dead-letters the message if this receive fails too: the handler's last chance to record an outcome. */
  lastAttempt: boolean;
  /** Reports this message as failed without an error: the queue redelivers it after the visibility timeout. */
  retryLater: () => void;
  /** The invocation's context, for its remaining time. */
  context: Context | undefined;
}

export interface WorkerSpec<J, R, S = undefined> {
  /** What the messages carry, named in the logs ("validation job"). */
  what: string;
  /** The message body as a job; undefined for a malformed one, which is logged and dropped (never redelivered). */
  parse: (body: string) => J | undefined;
  /** The queue's receive count before it dead-letters a message (sets `lastAttempt`). */
  maxReceiveCount?: number;
  /** Records are handled all at once (true) or one after another. */
  parallel?: boolean;
  /** Fields naming a job in the logs (ids only, never an address). */
  describe?: (job: J) => Record<string, unknown>;
  /** State shared by the records of one invocation (a cache of reads they share). */
  setup?: () => S;
  /** Handles one job. A throw reports only its message as failed (ReportBatchItemFailures); the others are done. */
  each: (job: J, delivery: Delivery, state: S) => Promise<R>;
  /** After every record: finishes their results together; resolves to the message ids that must come back. */
  after?: (results: { messageId: string; result: R }[]) => Promise<string[]>;
}

/**
 * The one wrapper of the SQS-fed functions, beside `endpoint()` for the
 * APIs: per-record handling with partial batch failures, malformed messages
 * dropped with a warning, the last receive told to the handler, and the
 * invocation's logs and metrics (`instrumented`).
 */
export function worker<J, R, S = undefined>(spec: WorkerSpec<J, R, S>) {
  return instrumented(async (event: SQSEvent, context?: Context): Promise<SQSBatchResponse> => {
    const failures = new Set<string>();
    const results: { messageId: string; result: R }[] = [];
    const state = spec.setup?.() as S;
    const handle = async (record: SQSEvent['Records'][number]) => {
      const job = spec.parse(record.body);
      if (job === undefined) {
        logger.warn(`dropping malformed ${spec.what}`, { message_id: record.messageId });
        return;
      }
      const receives = Number(record.attributes?.ApproximateReceiveCount ?? 1);
      const delivery: Delivery = {
        messageId: record.messageId,
        lastAttempt: spec.maxReceiveCount !== undefined && receives >= spec.maxReceiveCount,
        retryLater: () => failures.add(record.messageId),
        context,
      };
      try {
        results.push({ messageId: record.messageId, result: await spec.each(job, delivery, state) });
      } catch (error) {
        logger.warn(`${spec.what} failed; the queue will redeliver it`, {
          message_id: record.messageId,
          ...spec.describe?.(job),
          ...describeError(error),
        });
        failures.add(record.messageId);
      }
    };
    if (spec.parallel) await Promise.all(event.Records.map(handle));
    else for (const record of event.Records) await handle(record);
    if (spec.after) for (const messageId of await spec.after(results)) failures.add(messageId);
    return { batchItemFailures: [...failures].map((itemIdentifier) => ({ itemIdentifier })) };
  });
}
