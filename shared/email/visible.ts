import type { Principal } from '#shared/data/tokens';
import { getEmailList } from '#shared/data/email-lists';
import { deleteEmail, getEmail, listEmailsPage, type EmailRecord } from '#shared/data/emails';
import { badRequest, notFound } from '#shared/http/errors';

/*
 * The email read paths (and delete), apart from the create path in emails.ts:
 * what these handlers import must not reach the validator and its domain lists.
 */

/** An email of a deleted list is gone for readers at once, before the purge reaches it. */
export async function visibleEmail(who: Principal, id: number | undefined): Promise<EmailRecord> {
  const email = id === undefined ? undefined : await getEmail(who.accountId, id);
  if (!email || (email.email_list_id !== null && !(await getEmailList(who.accountId, email.email_list_id)))) {
    throw notFound('email', String(id ?? ''), 'id');
  }
  return email;
}

export async function listStandaloneEmails(who: Principal, page: number) {
  const result = await listEmailsPage(who.accountId, { kind: 'account' }, page);
  if (!result || result === 'missing') throw pageOutOfRange(page);
  return result;
}

export async function removeEmail(who: Principal, id: number | undefined): Promise<void> {
  await visibleEmail(who, id);
  if (!(await deleteEmail(who.accountId, id!))) throw notFound('email', String(id), 'id');
}

export const pageOutOfRange = (page: number) =>
  badRequest(`page ${page} does not exist; pages start at 1 and end at totalPages`, 'page', 'page_out_of_range');
