import { namedParts, transactNamed, txDelete, type NamedItems } from '#shared/db/batch';
import { attr, condition } from '#shared/db/expression';
import { query } from '#shared/db/items';
import { keys } from '#shared/db/keys';
import { AGAIN, retryOnConflict } from '#shared/db/retry';
import { compact, deltaUpdates, membershipDeltas, type Key } from '#shared/data/collections';
import { collectionKey, emailKey, getEmail, guardKey, targetOf } from '#shared/data/emails';

/** Deletes an email and takes it out of its collection's counts; false when it did not exist. */
export function deleteEmail(accountId: string, id: number): Promise<boolean> {
  return retryOnConflict(async () => {
    const email = await getEmail(accountId, id);
    if (!email) return false;
    const target = targetOf(email);
    const key = collectionKey(accountId, target);
    const unfinished = email.status === 'pending' || email.status === 'processing';
    const counters: Record<string, number> =
      target.kind === 'list' && unfinished ? { [email.awaiting ? 'awaiting_count' : 'pending_count']: -1 } : {};
    // Never re-create a list that was deleted meanwhile: its emails are already gone for readers.
    const [collection, ...blocks] = deltaUpdates(key, membershipDeltas([email.seq], -1, counters), target.kind === 'list');
    const items: NamedItems = [
      // The worker may finish it meanwhile: then the counters to touch differ, so read again.
      ['email', txDelete(emailKey(accountId, id), condition`${attr('status')} = ${email.status} AND awaiting = ${email.awaiting}`)],
      ['collection', collection!],
      ...namedParts('block', blocks),
    ];
    if (target.kind === 'list') items.push(['guard', txDelete(guardKey(accountId, target.listId, email.email))]);
    const failed = await transactNamed(items);
    if (failed.includes('collection')) return false;
    if (failed.length > 0) return AGAIN;
    await compact(key, email.seq);
    return true;
  });
}

/** One batch of a deleted list's keys to purge: emails, their address guards, then the page index's block items. */
export async function listEmailKeys(accountId: string, listId: number, limit: number): Promise<Key[]> {
  const collection = keys.list.key({ acct: accountId, list: listId }).pk;
  const read = (index: typeof keys.members | typeof keys.blocks) =>
    query({ index: index.index, partition: index.partition({ collection }) }, limit, 1);
  const members = await read(keys.members);
  if (members.length) {
    return members.flatMap((item) => [{ pk: item.pk as string, sk: item.sk as string }, guardKey(accountId, listId, item.email as string)]);
  }
  return (await read(keys.blocks)).map((item) => ({ pk: item.pk as string, sk: item.sk as string }));
}
