import * as z from 'zod/mini';
import { itemSchema } from '#shared/db/item-schema';
import { getItem, putNew } from '#shared/db/items';
import { keys } from '#shared/db/keys';
import { newId, nowSeconds } from '#shared/util/ids';

export interface Group {
  id: string;
  account_id: string;
  name: string;
  created_at: number;
}

const groupItem = itemSchema(() => z.object({ id: z.string(), account_id: z.string(), name: z.string(), created_at: z.number() }));

export async function createGroup(input: { accountId: string; name: string }): Promise<Group> {
  const group: Group = { id: newId('grp'), account_id: input.accountId, name: input.name, created_at: nowSeconds() };
  await putNew({ ...keys.group.key({ acct: input.accountId, grp: group.id }), type: 'group', ...group });
  return group;
}

export async function getGroup(accountId: string, groupId: string): Promise<Group | undefined> {
  const item = await getItem(keys.group.key({ acct: accountId, grp: groupId }));
  return item ? groupItem.parse(item) : undefined;
}
