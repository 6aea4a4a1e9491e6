import { DUE_AFTER_MS, dueEmails, postponeDue } from '#shared/data/emails';
import { strandedOutboxes } from '#shared/data/outbox';
import { enqueueValidation, settleAll } from '#shared/email/work';
import { describeError, logger } from '#shared/util/logger';

/** Rounds of 100 emails per index partition one pass handles at most; the next pass takes the rest. */
const MAX_ROUNDS = 50;
const CONCURRENCY = 25;

async function mapLimited<T, R>(items: T[], limit: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += limit) results.push(...(await Promise.all(items.slice(i, i + limit).map(run))));
  return results;
}

export interface RecoveryOptions {
  /** Outboxes older than this were stranded by a crash. */
  strandedAfterMs: number;
  /** Unfinished emails due before this time have lost their queue message. */
  dueBeforeMs: number;
  /** Stop starting rounds after this time (epoch ms). */
  deadline: number;
}

/**
 * Finds work that something lost — a process killed between the table and
 * the queue, a message past its retention, a purged queue, a local restart
 * (the local queue lives in memory) — and queues it again. Both sources are
 * indexes, never a scan: stranded outboxes by age, and unfinished emails by
 * due time. A re-queued email's due time moves on first, so the next pass
 * leaves it alone while its new message is live.
 */
export async function recoverLostWork(options: RecoveryOptions): Promise<{ settled: number; requeued: number }> {
  const stranded = await strandedOutboxes(options.strandedAfterMs);
  await settleAll(stranded);
  let requeued = 0;
  for (let round = 0; round < MAX_ROUNDS && Date.now() < options.deadline; round++) {
    const due = await dueEmails(options.dueBeforeMs, 100);
    if (due.length === 0) break;
    const moved = await mapLimited(due, CONCURRENCY, async (email) =>
      (await postponeDue(email, Date.now() + DUE_AFTER_MS)) ? email : undefined,
    );
    const byAccount = new Map<string, number[]>();
    for (const email of moved) if (email) byAccount.set(email.account_id, [...(byAccount.get(email.account_id) ?? []), email.id]);
    for (const [accountId, ids] of byAccount) {
      await enqueueValidation(accountId, ids).catch((error) =>
        logger.warn('could not re-queue unfinished emails; they come due again later', { account_id: accountId, email_ids: ids, ...describeError(error) }),
      );
      requeued += ids.length;
    }
  }
  if (stranded.length || requeued) logger.warn('recovered lost validation work', { settled: stranded.length, requeued });
  return { settled: stranded.length, requeued };
}

/** After a restart of the local runtime: its queue started empty, so every unfinished email has lost its message. */
export const recoverAfterRestart = () =>
  recoverLostWork({ strandedAfterMs: 0, dueBeforeMs: Date.now() + DUE_AFTER_MS, deadline: Date.now() + 60_000 });
