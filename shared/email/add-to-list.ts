import type { Hold } from '#shared/data/idempotency';
import type { Tenant } from '#shared/data/tokens';
import { getEmailList, toEmailList } from '#shared/data/email-lists';
import { ListGoneError, storeEmails } from '#shared/data/email-adds';
import { collectionKey, type EmailRecord } from '#shared/data/emails';
import { notFound } from '#shared/errors';
import { classifyEntries, mergeEntries, rejectedEntry } from '#shared/email/batch';
import { settleAfterRequest } from '#shared/email/outbox';
import { countMetric } from '#shared/util/metrics';

// Apart from lists.ts: adding checks address syntax, which the other list handlers must not load.

/**
 * Adds a batch to a list: invalid and duplicate entries are reported in
 * place and counted as rejected; accepted ones are stored `pending` and
 * queued (or held, when the account's credits cannot cover them).
 */
export async function addToList(who: Tenant, id: number, entries: unknown[], idempotency?: Hold) {
  const { accepted, errors } = await classifyEntries(entries, true);
  const gone = () => notFound('email list', String(id), 'id');
  let chunks;
  try {
    chunks = await storeEmails(
      who.accountId,
      { kind: 'list', listId: id },
      accepted.map((a) => a.address),
      errors.size,
      idempotency,
    );
  } catch (error) {
    if (error instanceof ListGoneError) throw gone();
    throw error;
  }
  const duplicates = new Set(chunks.flatMap((c) => c.duplicates));
  const stored = new Map(chunks.flatMap((c) => c.emails).map((e) => [e.email, e]));
  const emails = new Map<number, EmailRecord>();
  for (const { index, address } of accepted) {
    const email = stored.get(address);
    if (email) emails.set(index, email);
    else if (duplicates.has(address.toLowerCase())) errors.set(index, rejectedEntry(address, 'duplicate'));
  }
  for (const chunk of chunks) if (chunk.outbox.awaiting && !chunk.resumed) countMetric('creditsHeld', chunk.emails.length);
  const key = collectionKey(who.accountId, { kind: 'list', listId: id });
  const item = await settleAfterRequest(
    key,
    true,
    chunks.filter((c) => !c.settled).map((c) => c.outbox),
  );
  const list = item === undefined ? await getEmailList(who.accountId, id) : item === 'gone' ? undefined : toEmailList(item);
  if (!list) throw gone();
  return { list, entries: mergeEntries(entries.length, errors, emails) };
}
