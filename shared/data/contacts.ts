import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet } from '#shared/db/batch';
import { db, putNew, tableName } from '#shared/db/client';
import { keys } from '#shared/db/keys';
import { newId, nowSeconds } from '#shared/util/ids';

export interface Contact {
  id: string;
  account_id: string;
  username: string;
  phone_number: string | null;
  avatar_url: string | null;
  last_active_at: number | null;
  created_at: number;
}

export async function createContact(input: {
  accountId: string;
  username: string;
  phoneNumber?: string;
  avatarUrl?: string;
}): Promise<Contact> {
  const contact: Contact = {
    id: newId('ct'),
    account_id: input.accountId,
    username: input.username,
    phone_number: input.phoneNumber ?? null,
    avatar_url: input.avatarUrl ?? null,
    last_active_at: null,
    created_at: nowSeconds(),
  };
  await putNew({ ...keys.contact(input.accountId, contact.id), type: 'contact', ...contact });
  return contact;
}

const toContact = (item: Record<string, unknown>): Contact => {
  const { id, account_id, username, phone_number, avatar_url, last_active_at, created_at } = item as unknown as Contact;
  return { id, account_id, username, phone_number, avatar_url, last_active_at, created_at };
};

export async function getContact(accountId: string, contactId: string): Promise<Contact | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.contact(accountId, contactId) }));
  return out.Item ? toContact(out.Item) : undefined;
}

export async function getContacts(accountId: string, contactIds: string[]): Promise<Map<string, Contact>> {
  const items = await batchGet(contactIds.map((id) => keys.contact(accountId, id)));
  return new Map(items.map((item) => [item.id as string, toContact(item)]));
}

/** Update expression fragment a message send uses to mark its sender active. */
export const touchContactUpdate = (accountId: string, contactId: string, at: number) => ({
  TableName: tableName(),
  Key: keys.contact(accountId, contactId),
  UpdateExpression: 'SET last_active_at = :at',
  ConditionExpression: 'attribute_exists(pk)',
  ExpressionAttributeValues: { ':at': at },
});
