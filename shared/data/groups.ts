import * as v from 'valibot';
import { parseItem } from '#shared/db/item-schema';
import { getItem, putNew, query } from '#shared/db/items';
import { keys } from '#shared/db/keys';
import { newId, nowSeconds } from '#shared/util/ids';

export interface Group {
  id: string;
  account_id: string;
  name: string;
  created_at: number;
}

// Built in a /* @__PURE__ */ call, so that esbuild drops it from functions that never read this item (shared/db/item-schema.ts).
const groupItem = /* @__PURE__ */ (() => v.object({ id: v.string(), account_id: v.string(), name: v.string(), created_at: v.number() }))();

export async function createGroup(input: { accountId: string; name: string }): Promise<Group> {
  const group: Group = { id: newId('grp'), account_id: input.accountId, name: input.name, created_at: nowSeconds() };
  await putNew({
    ...keys.group.key({ acct: input.accountId, grp: group.id }),
    ...keys.groupById.entry({ grp: group.id }),
    type: 'group',
    ...group,
  });
  return group;
}

/** The account a group belongs to, found by the group's id alone. */
export async function groupAccountOf(groupId: string): Promise<string | undefined> {
  const [item] = await query({ index: keys.groupById.index, partition: keys.groupById.partition({ grp: groupId }) }, 1, 1);
  return item?.account_id as string | undefined;
}

export async function getGroup(accountId: string, groupId: string): Promise<Group | undefined> {
  const item = await getItem(keys.group.key({ acct: accountId, grp: groupId }));
  return item ? parseItem(groupItem, item) : undefined;
}
