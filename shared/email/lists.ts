import type { Tenant } from '#shared/data/tokens';
import { getEmailList, listEmailLists } from '#shared/data/email-lists';
import { keys } from '#shared/db/keys';
import { collectionKey, listEmailsPage } from '#shared/data/emails';
import { notFound } from '#shared/errors';
import { lastPageOf, pageOutOfRange } from '#shared/email/visible';

export async function getList(who: Tenant, id: number) {
  const list = await getEmailList(who.accountId, id);
  if (!list) throw notFound('email list', String(id), 'id');
  return list;
}

export async function listLists(who: Tenant, page: number) {
  const result = await listEmailLists(who.accountId, page);
  if (!result) throw pageOutOfRange(page, await lastPageOf(keys.accountLists.key({ acct: who.accountId })));
  return result;
}

export async function listListEmails(who: Tenant, id: number, page: number) {
  const result = await listEmailsPage(who.accountId, { kind: 'list', listId: id }, page);
  if (result === 'missing') throw notFound('email list', String(id), 'id');
  if (!result) throw pageOutOfRange(page, await lastPageOf(collectionKey(who.accountId, { kind: 'list', listId: id })));
  return result;
}
