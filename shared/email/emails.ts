import type { Principal } from '#shared/data/tokens';
import { finishEmail, storeEmails, type EmailRecord } from '#shared/data/emails';
import { classifyEntries, mergeEntries } from '#shared/email/batch';
import { validateEmail } from '#shared/email/validator/index';
import { reportValidation } from '#shared/email/processing';
import { settleOutboxes } from '#shared/email/work';
import { countMetric } from '#shared/util/metrics';
import { logger, describeError } from '#shared/util/logger';

/**
 * POST /emails: stores the batch, validates inline until the deadline, and
 * hands whatever is unfinished to the worker through the queue.
 */
export async function createEmails(who: Principal, entries: unknown[], deadline: number) {
  const { accepted, errors } = await classifyEntries(entries, false);
  const chunks = await storeEmails(
    who.accountId,
    { kind: 'account' },
    accepted.map((a) => a.address),
    0,
  );
  const stored = chunks.flatMap((c) => c.emails);

  const finished = await Promise.all(
    stored.map(async (email): Promise<EmailRecord> => {
      if (email.awaiting) return email;
      const outcome = await validateEmail(email.email, { deadline });
      reportValidation(email, outcome, true);
      if (outcome.status !== 'completed') return email; // the worker retries it
      const { email: _address, ...result } = outcome.result;
      return (await finishEmail(email, { status: 'completed', result })) ? { ...email, status: 'completed', result } : email;
    }),
  );
  for (const chunk of chunks) if (chunk.outbox.awaiting) countMetric('creditsHeld', chunk.emails.length);
  if (chunks.length) {
    const unfinished = new Set(finished.filter((e) => e.status !== 'completed').map((e) => e.id));
    await settleOutboxes(
      chunks[0]!.outbox.collection,
      false,
      chunks.map((c) => c.outbox),
      unfinished,
    ).catch((error) => logger.warn('settling deferred; the sweeper will finish it', describeError(error)));
  }
  return mergeEntries(entries.length, errors, new Map(accepted.map((a, i) => [a.index, finished[i]!])));
}

// Read paths live apart (visible.ts) so the functions that only read never load the validator.
