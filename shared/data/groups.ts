import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, putNew, tableName } from '#shared/db/client';
import { keys } from '#shared/db/keys';
import { newId, nowSeconds } from '#shared/util/ids';

export interface Group {
  id: string;
  account_id: string;
  name: string;
  created_at: number;
}

export async function createGroup(input: { accountId: string; name: string }): Promise<Group> {
  const group: Group = { id: newId('grp'), account_id: input.accountId, name: input.name, created_at: nowSeconds() };
  await putNew({ ...keys.group(input.accountId, group.id), type: 'group', ...group });
  return group;
}

export async function getGroup(accountId: string, groupId: string): Promise<Group | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.group(accountId, groupId) }));
  if (!out.Item) return undefined;
  const { id, account_id, name, created_at } = out.Item as Group;
  return { id, account_id, name, created_at };
}
