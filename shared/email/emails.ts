import type { Hold } from '#shared/data/idempotency';
import type { Tenant } from '#shared/data/tokens';
import { storeEmails } from '#shared/data/email-adds';
import { finishEmail } from '#shared/data/email-status';
import { collectionKey, type EmailRecord } from '#shared/data/emails';
import { classifyEntries, mergeEntries } from '#shared/email/batch';
import { validateEmail } from '#shared/email/validator/index';
import { reportValidation } from '#shared/email/processing';
import { isUnfinished } from '#shared/email/outcomes';
import { settleAfterRequest } from '#shared/email/outbox';
import { countMetric } from '#shared/util/metrics';

/**
 * POST /emails: stores the batch, validates inline until the deadline, and
 * hands whatever is unfinished to the worker through the queue.
 */
export async function createEmails(who: Tenant, entries: unknown[], deadline: number, idempotency?: Hold) {
  const { accepted, errors } = await classifyEntries(entries, false);
  const chunks = await storeEmails(
    who.accountId,
    { kind: 'account' },
    accepted.map((a) => a.address),
    0,
    idempotency,
  );
  const stored = chunks.flatMap((c) => c.emails);
  const positions = chunks.flatMap((c) => c.positions);

  const finished = await Promise.all(
    stored.map(async (email): Promise<EmailRecord> => {
      // Awaiting credits, or finished by an earlier attempt of the same request.
      if (email.awaiting || !isUnfinished(email)) return email;
      const outcome = await validateEmail(email.email, { deadline });
      reportValidation(email, outcome, true);
      if (outcome.status !== 'completed') return email; // the worker retries it
      const { email: _address, ...result } = outcome.result;
      return (await finishEmail(email, { status: 'completed', result })) ? { ...email, status: 'completed', result } : email;
    }),
  );
  for (const chunk of chunks) if (chunk.outbox.awaiting && !chunk.resumed) countMetric('creditsHeld', chunk.emails.length);
  const unsettled = chunks.filter((c) => !c.settled).map((c) => c.outbox);
  const unfinished = new Set(finished.filter((e) => e.status !== 'completed').map((e) => e.id));
  if (unsettled.length) await settleAfterRequest(collectionKey(who.accountId, { kind: 'account' }), false, unsettled, unfinished);
  const byPosition = new Map(positions.map((p, i) => [p, finished[i]!]));
  return mergeEntries(entries.length, errors, new Map(accepted.map((a, i) => [a.index, byPosition.get(i)!])));
}

// Read paths live apart (visible.ts) so the functions that only read never load the validator.
