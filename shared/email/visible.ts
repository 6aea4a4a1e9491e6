import type { Tenant } from '#shared/data/tokens';
import { endListRound, getEmailList } from '#shared/data/email-lists';
import { deleteEmail } from '#shared/data/email-deletes';
import { collectionKey, getEmail, listEmailsPage, type EmailRecord } from '#shared/data/emails';
import { readCollection, totalPages, type Key } from '#shared/data/collections';
import { invalid, notFound } from '#shared/errors';

/*
 * The email read paths (and delete), apart from the create path in emails.ts:
 * what these handlers import must not reach the validator and its domain lists.
 */

/** An email of a deleted list is gone for readers at once, before the purge reaches it. */
export async function visibleEmail(who: Tenant, id: number): Promise<EmailRecord> {
  const email = await getEmail(who.accountId, id);
  if (!email || (email.email_list_id !== null && !(await getEmailList(who.accountId, email.email_list_id)))) {
    throw notFound('email', String(id), 'id');
  }
  return email;
}

export async function listStandaloneEmails(who: Tenant, page: number) {
  const result = await listEmailsPage(who.accountId, { kind: 'account' }, page);
  if (!result || result === 'missing') throw pageOutOfRange(page, await lastPageOf(collectionKey(who.accountId, { kind: 'account' })));
  return result;
}

export async function removeEmail(who: Tenant, id: number): Promise<void> {
  const email = await visibleEmail(who, id);
  if (!(await deleteEmail(who.accountId, id))) throw notFound('email', String(id), 'id');
  // An unfinished email's list may have nothing left to do: the round ends here (untimed: no email of it finished), so
  // that a later round's events and time start from their own.
  const unfinished = email.status === 'pending' || email.status === 'processing';
  if (unfinished && email.email_list_id !== null) await endListRound(who.accountId, email.email_list_id);
}

// A page past 2^53 arrives held at 2^53 - 1 (shared/http/email-schemas.ts): not the number the client sent, so not named.
export const pageOutOfRange = (page: number, lastPage: number) =>
  invalid(
    `${page < Number.MAX_SAFE_INTEGER ? `page ${page}` : 'that page'} does not exist; the pages are 1 to ${lastPage}`,
    'page',
    'page_out_of_range',
  );

/** The last page of a collection, read again only on this error path so the listing's reads stay as they are. */
export const lastPageOf = async (key: Key) => totalPages((await readCollection(key)).memberCount);
