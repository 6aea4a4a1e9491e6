import type { Principal } from '#shared/data/tokens';
import { createEmailList, deleteEmailList, getEmailList, listEmailLists } from '#shared/data/email-lists';
import { listEmailsPage } from '#shared/data/emails';
import { notFound } from '#shared/http/errors';
import { pageOutOfRange } from '#shared/email/visible';
import { settleOutboxes } from '#shared/email/work';
import { purgeRecordPut } from '#shared/data/purges';
import { startPurge } from '#shared/purge';
import { describeError, logger } from '#shared/util/logger';

export async function createList(who: Principal, input: { name: string; description?: string }) {
  const { list, outbox } = await createEmailList(who.accountId, input);
  await settleOutboxes(outbox.collection, false, [outbox]).catch((error) =>
    logger.warn('settling deferred; the sweeper will finish it', describeError(error)),
  );
  return list;
}

export async function getList(who: Principal, id: number | undefined) {
  const list = id === undefined ? undefined : await getEmailList(who.accountId, id);
  if (!list) throw notFound('email list', String(id ?? ''), 'id');
  return list;
}

export async function listLists(who: Principal, page: number) {
  const result = await listEmailLists(who.accountId, page);
  if (!result) throw pageOutOfRange(page);
  return result;
}

export async function listListEmails(who: Principal, id: number | undefined, page: number) {
  const result = id === undefined ? 'missing' : await listEmailsPage(who.accountId, { kind: 'list', listId: id }, page);
  if (result === 'missing') throw notFound('email list', String(id ?? ''), 'id');
  if (!result) throw pageOutOfRange(page);
  return result;
}

/** Gone for readers at once; its emails are purged now and, if many, continued from the queue. */
export async function deleteList(who: Principal, id: number | undefined, deadline: number) {
  if (id === undefined) throw notFound('email list', '', 'id');
  const job = { kind: 'purge-list', accountId: who.accountId, listId: id } as const;
  if (!(await deleteEmailList(who.accountId, id, [purgeRecordPut(job)]))) throw notFound('email list', String(id), 'id');
  await startPurge(job, deadline);
}
