import * as v from 'valibot';
import { parseItem } from '#shared/db/item-schema';
import { batchGet, txUpdate, type TransactItem } from '#shared/db/batch';
import { update } from '#shared/db/expression';
import { getItem, putNew } from '#shared/db/items';
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
  await putNew({ ...keys.contact.key({ acct: input.accountId, ct: contact.id }), type: 'contact', ...contact });
  return contact;
}

// Built in a /* @__PURE__ */ call, so that esbuild drops it from functions that never read this item (shared/db/item-schema.ts).
const contactItem = /* @__PURE__ */ (() =>
  v.object({
    id: v.string(),
    account_id: v.string(),
    username: v.string(),
    phone_number: v.nullable(v.string()),
    avatar_url: v.nullable(v.string()),
    last_active_at: v.nullable(v.number()),
    created_at: v.number(),
  }))();

const toContact = (item: Record<string, unknown>): Contact => parseItem(contactItem, item);

export async function getContact(accountId: string, contactId: string): Promise<Contact | undefined> {
  const item = await getItem(keys.contact.key({ acct: accountId, ct: contactId }));
  return item ? toContact(item) : undefined;
}

export async function getContacts(accountId: string, contactIds: string[]): Promise<Map<string, Contact>> {
  const items = await batchGet(contactIds.map((ct) => keys.contact.key({ acct: accountId, ct })));
  return new Map(items.map((item) => [item.id as string, toContact(item)]));
}

/** Transaction part a message send uses to mark its sender active. */
export const touchContactUpdate = (accountId: string, contactId: string, at: number): TransactItem =>
  txUpdate(keys.contact.key({ acct: accountId, ct: contactId }), update().set`last_active_at = ${at}`.when`attribute_exists(pk)`);
