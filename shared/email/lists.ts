import type { Principal } from '#shared/data/tokens';
import { createEmailList, deleteEmailList, getEmailList, listEmailLists, toEmailList } from '#shared/data/email-lists';
import { keys } from '#shared/db/keys';
import { collectionKey, ListGoneError, listEmailsPage, storeEmails, type EmailRecord } from '#shared/data/emails';
import { notFound } from '#shared/errors';
import { classifyEntries, mergeEntries, rejectedEntry } from '#shared/email/batch';
import { lastPageOf, pageOutOfRange } from '#shared/email/emails';
import { settleOutboxes } from '#shared/email/work';
import { purgeRecordPut } from '#shared/data/purges';
import { startPurge } from '#shared/purge';
import { describeError, logger } from '#shared/util/logger';
import { countMetric } from '#shared/util/metrics';

export async function createList(who: Principal, input: { name: string; description?: string }) {
  const { list, outbox } = await createEmailList(who.accountId, input);
  await settleOutboxes(outbox.collection, false, [outbox]).catch((error) =>
    logger.warn('settling deferred; the sweeper will finish it', describeError(error)),
  );
  return list;
}

export async function getList(who: Principal, id: number) {
  const list = await getEmailList(who.accountId, id);
  if (!list) throw notFound('email list', String(id), 'id');
  return list;
}

export async function listLists(who: Principal, page: number) {
  const result = await listEmailLists(who.accountId, page);
  if (!result) throw pageOutOfRange(page, await lastPageOf(keys.accountLists.key({ acct: who.accountId })));
  return result;
}

export async function listListEmails(who: Principal, id: number, page: number) {
  const result = await listEmailsPage(who.accountId, { kind: 'list', listId: id }, page);
  if (result === 'missing') throw notFound('email list', String(id), 'id');
  if (!result) throw pageOutOfRange(page, await lastPageOf(collectionKey(who.accountId, { kind: 'list', listId: id })));
  return result;
}

/**
 * Adds a batch to a list: invalid and duplicate entries are reported in
 * place and counted as rejected; accepted ones are stored `pending` and
 * queued (or held, when the account's credits cannot cover them).
 */
export async function addToList(who: Principal, id: number, entries: unknown[]) {
  const { accepted, errors } = classifyEntries(entries, true);
  const gone = () => notFound('email list', String(id), 'id');
  let chunks;
  try {
    chunks = await storeEmails(who.accountId, { kind: 'list', listId: id }, accepted.map((a) => a.address), errors.size);
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
  for (const chunk of chunks) if (chunk.outbox.awaiting) countMetric('creditsHeld', chunk.emails.length);
  const key = collectionKey(who.accountId, { kind: 'list', listId: id });
  let item: Record<string, unknown> | 'gone' | undefined;
  try {
    item = await settleOutboxes(key, true, chunks.map((c) => c.outbox));
  } catch (error) {
    logger.warn('settling deferred; the sweeper will finish it', describeError(error));
  }
  const list = item === undefined ? await getEmailList(who.accountId, id) : item === 'gone' ? undefined : toEmailList(item);
  if (!list) throw gone();
  return { list, entries: mergeEntries(entries.length, errors, emails) };
}

/** Gone for readers at once; its emails are purged now and, if many, continued from the queue. */
export async function deleteList(who: Principal, id: number, deadline: number) {
  const job = { kind: 'purge-list', accountId: who.accountId, listId: id } as const;
  if (!(await deleteEmailList(who.accountId, id, [purgeRecordPut(job)]))) throw notFound('email list', String(id), 'id');
  await startPurge(job, deadline);
}
