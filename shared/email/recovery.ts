import { getEmails } from '#shared/data/emails';
import { deleteOutbox, DUE_AFTER_MS, dueOutboxes, markDispatched, strandedOutboxes } from '#shared/data/outbox';
import { enqueueValidation, settleAll, workOf } from '#shared/email/work';
import { describeError, logger } from '#shared/util/logger';

/** Rounds of up to 100 outboxes per index partition one pass handles at most; the next pass takes the rest. */
const MAX_ROUNDS = 20;

export interface RecoveryOptions {
  /** Outboxes still unqueued after this long were stranded by a crash. */
  strandedAfterMs: number;
  /** Queued work due before this time should be finished: what is not has lost its message. */
  dueBeforeMs: number;
  /** Stop starting rounds after this time (epoch ms). */
  deadline: number;
}

/**
 * Finds work that something lost — a process killed between the table and
 * the queue, a message past its retention, a purged queue, a local restart
 * (the local queue lives in memory) — and queues it again. Both sources are
 * indexes, never a scan: outboxes not yet queued, by age, and queued ones by
 * due time. A due outbox whose emails all finished is deleted; otherwise its
 * unfinished emails are queued again and its due time moves on.
 */
export async function recoverLostWork(options: RecoveryOptions): Promise<{ settled: number; requeued: number }> {
  const stranded = await strandedOutboxes(options.strandedAfterMs);
  await settleAll(stranded);
  let requeued = 0;
  for (let round = 0; round < MAX_ROUNDS && Date.now() < options.deadline; round++) {
    const due = await dueOutboxes(options.dueBeforeMs);
    if (due.length === 0) break;
    for (const outbox of due) {
      const unfinished = (await getEmails(outbox.account_id, outbox.email_ids)).filter(
        (e) => (e.status === 'pending' || e.status === 'processing') && !e.awaiting,
      );
      if (unfinished.length === 0) {
        await deleteOutbox(outbox);
        continue;
      }
      await markDispatched([outbox], Math.max(Date.now(), options.dueBeforeMs) + DUE_AFTER_MS);
      const work = unfinished.map(workOf);
      await enqueueValidation(outbox.account_id, work).catch((error) =>
        logger.warn('could not re-queue unfinished emails; they come due again later', {
          account_id: outbox.account_id,
          email_ids: work.map((w) => w.id),
          ...describeError(error),
        }),
      );
      requeued += work.length;
    }
  }
  if (stranded.length || requeued) logger.warn('recovered lost validation work', { settled: stranded.length, requeued });
  return { settled: stranded.length, requeued };
}

/** After a restart of the local runtime: its queue started empty, so all queued work has lost its message. */
export const recoverAfterRestart = () =>
  recoverLostWork({ strandedAfterMs: 0, dueBeforeMs: Date.now() + DUE_AFTER_MS, deadline: Date.now() + 60_000 });
