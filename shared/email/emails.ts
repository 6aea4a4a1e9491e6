import type { Principal } from '#shared/data/tokens';
import { getEmailList } from '#shared/data/email-lists';
import { collectionKey, deleteEmail, finishEmail, getEmail, listEmailsPage, storeEmails, type EmailRecord } from '#shared/data/emails';
import { readCollection, totalPages, type Key } from '#shared/data/collections';
import { invalid, notFound } from '#shared/errors';
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
  const { accepted, errors } = classifyEntries(entries, false);
  const chunks = await storeEmails(who.accountId, { kind: 'account' }, accepted.map((a) => a.address), 0);
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
    await settleOutboxes(chunks[0]!.outbox.collection, false, chunks.map((c) => c.outbox), unfinished).catch((error) =>
      logger.warn('settling deferred; the sweeper will finish it', describeError(error)),
    );
  }
  return mergeEntries(entries.length, errors, new Map(accepted.map((a, i) => [a.index, finished[i]!])));
}

/** An email of a deleted list is gone for readers at once, before the purge reaches it. */
export async function visibleEmail(who: Principal, id: number): Promise<EmailRecord> {
  const email = await getEmail(who.accountId, id);
  if (!email || (email.email_list_id !== null && !(await getEmailList(who.accountId, email.email_list_id)))) {
    throw notFound('email', String(id), 'id');
  }
  return email;
}

export async function listStandaloneEmails(who: Principal, page: number) {
  const result = await listEmailsPage(who.accountId, { kind: 'account' }, page);
  if (!result || result === 'missing') throw pageOutOfRange(page, await lastPageOf(collectionKey(who.accountId, { kind: 'account' })));
  return result;
}

export async function removeEmail(who: Principal, id: number): Promise<void> {
  await visibleEmail(who, id);
  if (!(await deleteEmail(who.accountId, id))) throw notFound('email', String(id), 'id');
}

export const pageOutOfRange = (page: number, lastPage: number) =>
  invalid(`page ${page} does not exist; the pages are 1 to ${lastPage}`, 'page', 'page_out_of_range');

/** The last page of a collection, read again only on this error path so the listing's reads stay as they are. */
export const lastPageOf = async (key: Key) => totalPages((await readCollection(key)).memberCount);
