import * as v from 'valibot';
import { parseItem } from '#shared/db/item-schema';
import { namedParts, transactNamed, txCheck, txDelete, type TransactItem, type TransactItems } from '#shared/db/batch';
import { attr, condition, update } from '#shared/db/expression';
import { conditionHeld, getItem, putItem, query, unlessConditionFails, updateItem } from '#shared/db/items';
import { keys } from '#shared/db/keys';
import { queryIndexPage, type CursorPageRequest, type Page } from '#shared/db/paging';
import { newId, nowSeconds } from '#shared/util/ids';

export interface Group {
  id: string;
  account_id: string;
  name: string;
  member_count: number;
  created_at: number;
}

// Built in a /* @__PURE__ */ call, so that esbuild drops it from functions that never read this item (shared/db/item-schema.ts).
const groupItem = /* @__PURE__ */ (() =>
  v.object({
    id: v.string(),
    account_id: v.string(),
    name: v.string(),
    member_count: v.optional(v.number(), 0),
    created_at: v.number(),
  }))();

/** A new group's id: its members are written under it before the group itself. */
export const newGroupId = () => newId('grp');

const toGroup = (item: Record<string, unknown>): Group => parseItem(groupItem, item);
const groupKey = (accountId: string, groupId: string) => keys.group.key({ acct: accountId, grp: groupId });

/**
 * Writes a new group whose `memberCount` members are already stored (the
 * group appears only once they all are, so a failed create leaves no partial
 * group). An idempotent retry passes the same `id` and gets the group its
 * first attempt wrote.
 */
export async function createGroup(input: { accountId: string; name: string; id?: string; memberCount?: number }): Promise<Group> {
  const group: Group = {
    id: input.id ?? newId('grp'),
    account_id: input.accountId,
    name: input.name,
    member_count: input.memberCount ?? 0,
    created_at: nowSeconds(),
  };
  const written = await conditionHeld(
    putItem(
      {
        ...groupKey(input.accountId, group.id),
        ...keys.groups.entry({ acct: input.accountId, grp: group.id }),
        ...keys.groupById.entry({ grp: group.id }),
        type: 'group',
        ...group,
      },
      condition`attribute_not_exists(pk)`,
    ),
  );
  if (written) return group;
  const existing = await getGroup(input.accountId, group.id, true);
  if (!existing) throw new Error(`group ${group.id} could not be written`);
  return existing;
}

/** The account a group belongs to, found by the group's id alone. */
export async function groupAccountOf(groupId: string): Promise<string | undefined> {
  const [item] = await query({ index: keys.groupById.index, partition: keys.groupById.partition({ grp: groupId }) }, 1, 1);
  return item?.account_id as string | undefined;
}

export async function getGroup(accountId: string, groupId: string, consistent = false): Promise<Group | undefined> {
  const item = await getItem(groupKey(accountId, groupId), consistent);
  return item ? toGroup(item) : undefined;
}

/** The account's groups, newest first. */
export async function listGroups(accountId: string, page: CursorPageRequest): Promise<Page<Group>> {
  const result = await queryIndexPage({ index: keys.groups.index, partitions: [keys.groups.partition({ acct: accountId })], ...page });
  return { items: result.items.map(toGroup), hasMore: result.hasMore };
}

/** Renames a group; undefined when there is none. */
export async function renameGroup(accountId: string, groupId: string, name: string): Promise<Group | undefined> {
  const out = await unlessConditionFails(
    updateItem(groupKey(accountId, groupId), update().set`${attr('name')} = ${name}`.when`attribute_exists(pk)`, 'ALL_NEW'),
  );
  return out ? toGroup(out) : undefined;
}

/** Transaction part of a group send: the group is still there (its delete and the send are then one before the other). */
export const groupExists = (accountId: string, groupId: string): TransactItem =>
  txCheck(groupKey(accountId, groupId), condition`attribute_exists(pk)`);

/** Deletes the group item with `also` (the purge record of its members) in one transaction; false when there was none. */
export async function deleteGroup(accountId: string, groupId: string, also: TransactItems): Promise<boolean> {
  const failed = await transactNamed([
    ['group', txDelete(groupKey(accountId, groupId), condition`attribute_exists(pk)`)],
    ...namedParts('also', also),
  ]);
  return failed.length === 0;
}
