import { batchPut, transactNamed, txDelete, txPut, txUpdate } from '#shared/db/batch';
import { condition, update } from '#shared/db/expression';
import { getItem, query } from '#shared/db/items';
import { keys } from '#shared/db/keys';
import { queryTablePage, type CursorPageRequest, type Page } from '#shared/db/paging';
import { nowSeconds } from '#shared/util/ids';

/** A group's members are the participants of its thread; a send reads them all in one Query. */
export const MAX_GROUP_MEMBERS = 1000;

const groupKey = (accountId: string, groupId: string) => keys.group.key({ acct: accountId, grp: groupId });
const memberKey = (accountId: string, groupId: string, contactId: string) =>
  keys.groupMember.key({ acct: accountId, grp: groupId, ct: contactId });

/** A member item: in its group's partition, and in the contact's own list of groups. */
const memberItem = (accountId: string, groupId: string, contactId: string, at: number) => ({
  ...memberKey(accountId, groupId, contactId),
  ...keys.memberships.entry({ acct: accountId, ct: contactId, grp: groupId }),
  contact_id: contactId,
  added_at: at,
});

/** Stores a new group's first members (up to MAX_GROUP_MEMBERS), before the group item that makes them visible. */
export async function putFirstMembers(accountId: string, groupId: string, contactIds: string[]): Promise<void> {
  const at = nowSeconds();
  await batchPut(contactIds.map((ct) => memberItem(accountId, groupId, ct, at)));
}

/**
 * Adds a contact to a group: the member item and the group's count in one
 * transaction, so the cap holds however many adds run at once. 'exists'
 * when it was a member already, 'full' at the cap, 'no_group' without the group.
 */
export async function addMember(accountId: string, groupId: string, contactId: string): Promise<'added' | 'exists' | 'full' | 'no_group'> {
  const failed = await transactNamed([
    ['member', txPut(memberItem(accountId, groupId, contactId, nowSeconds()), condition`attribute_not_exists(pk)`)],
    [
      'group',
      txUpdate(
        groupKey(accountId, groupId),
        update().add`member_count ${1}`
          .when`attribute_exists(pk) AND (attribute_not_exists(member_count) OR member_count < ${MAX_GROUP_MEMBERS})`,
      ),
    ],
  ]);
  if (failed.length === 0) return 'added';
  if (failed.includes('member')) return (await getItem(groupKey(accountId, groupId), true)) ? 'exists' : 'no_group';
  return (await getItem(groupKey(accountId, groupId), true)) ? 'full' : 'no_group';
}

/** Removes a member; false when the contact was not one (or the group is gone). */
export async function removeMember(accountId: string, groupId: string, contactId: string): Promise<boolean> {
  const failed = await transactNamed([
    ['member', txDelete(memberKey(accountId, groupId, contactId), condition`attribute_exists(pk)`)],
    ['group', txUpdate(groupKey(accountId, groupId), update().add`member_count ${-1}`.when`attribute_exists(pk)`)],
  ]);
  return failed.length === 0;
}

export async function isMember(accountId: string, groupId: string, contactId: string): Promise<boolean> {
  return (await getItem(memberKey(accountId, groupId, contactId), true)) !== undefined;
}

/** Every member's contact id (strong read; at most MAX_GROUP_MEMBERS items, a few calls of 1 MB at most). */
export async function groupMembers(accountId: string, groupId: string): Promise<string[]> {
  const items = await query(
    {
      partition: keys.groupMember.partition({ acct: accountId, grp: groupId }),
      sort: ['begins_with', keys.groupMember.skPrefix],
      projection: 'contact_id',
    },
    MAX_GROUP_MEMBERS + 1,
  );
  return items.map((item) => item.contact_id as string);
}

/** A page of a group's member ids, newest contact first (the cursor is a contact id). */
export async function memberPage(accountId: string, groupId: string, page: CursorPageRequest): Promise<Page<string>> {
  const result = await queryTablePage({
    partition: keys.groupMember.partition({ acct: accountId, grp: groupId }),
    prefix: keys.groupMember.skPrefix,
    ...page,
  });
  return { items: result.items.map((item) => item.contact_id as string), hasMore: result.hasMore };
}

/** A batch of a group's member keys (a deleted group's members are purged). */
export async function memberKeys(accountId: string, groupId: string, limit: number) {
  const items = await query({ partition: keys.groupMember.partition({ acct: accountId, grp: groupId }), projection: 'pk, sk' }, limit, 1);
  return items.map((item) => ({ pk: String(item.pk), sk: String(item.sk) }));
}

/** A batch of the groups a contact is in (a deleted contact leaves them). */
export async function groupsOf(accountId: string, contactId: string, limit: number): Promise<string[]> {
  const items = await query(
    { index: keys.memberships.index, partition: keys.memberships.partition({ acct: accountId, ct: contactId }) },
    limit,
    1,
  );
  return items.map((item) => String(item.gsi1sk));
}
