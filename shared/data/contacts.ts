import * as v from 'valibot';
import { parseItem } from '#shared/db/item-schema';
import {
  batchGet,
  transactNamed,
  txCheck,
  txDelete,
  txPut,
  txUpdate,
  type TransactItem,
  type TransactItems,
  namedParts,
} from '#shared/db/batch';
import { attr, condition, update } from '#shared/db/expression';
import { getItem } from '#shared/db/items';
import { keys, usernameFold } from '#shared/db/keys';
import { queryIndexPage, type CursorPageRequest, type Page } from '#shared/db/paging';
import { DomainError } from '#shared/errors';
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

export interface NewContact {
  accountId: string;
  username: string;
  phoneNumber?: string;
  avatarUrl?: string;
  /** The id to write (an idempotent request's derived id); a new one otherwise. */
  id?: string;
}

const contactKey = (accountId: string, contactId: string) => keys.contact.key({ acct: accountId, ct: contactId });
const usernameKey = (accountId: string, username: string) => keys.username.key({ acct: accountId, username });

/** A transaction's check that the contact exists and is not deleted. */
export const contactIsLive = (accountId: string, contactId: string): TransactItem =>
  txCheck(contactKey(accountId, contactId), condition`attribute_exists(pk) AND attribute_not_exists(deleted_at)`);

/** Another live contact of the account has this username, compared ignoring case. */
export const usernameTaken = (username: string) =>
  new DomainError(
    'conflict',
    'username_taken',
    `A contact with the username '${username}' already exists (usernames are unique ignoring case)`,
    'username',
  );

/** The contact and its username's guard, in one transaction (409 when another live contact has that username). */
export async function createContact(input: NewContact): Promise<Contact> {
  const contact: Contact = {
    id: input.id ?? newId('ct'),
    account_id: input.accountId,
    username: input.username,
    phone_number: input.phoneNumber ?? null,
    avatar_url: input.avatarUrl ?? null,
    last_active_at: null,
    created_at: nowSeconds(),
  };
  const failed = await transactNamed([
    [
      'contact',
      txPut(
        {
          ...contactKey(input.accountId, contact.id),
          ...keys.contacts.entry({ acct: input.accountId, ct: contact.id }),
          type: 'contact',
          ...contact,
        },
        condition`attribute_not_exists(pk)`,
      ),
    ],
    ['username', txPut({ ...usernameKey(input.accountId, input.username), contact_id: contact.id }, condition`attribute_not_exists(pk)`)],
  ]);
  if (failed.length === 0) return contact;
  // A retry of a request whose first attempt committed finds its own contact.
  if (input.id !== undefined) {
    const existing = await getContact(input.accountId, input.id);
    if (existing) return existing;
  }
  if (failed.includes('username')) throw usernameTaken(input.username);
  throw new Error(`creating a contact failed on ${failed.join(', ')}`);
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

/** A live contact (a deleted one is not found). */
export async function getContact(accountId: string, contactId: string, consistent = false): Promise<Contact | undefined> {
  const item = await getItem(contactKey(accountId, contactId), consistent);
  return item && item.deleted_at === undefined ? toContact(item) : undefined;
}

/** Contacts as messages show their senders: a deleted contact as it was. */
export async function getContacts(
  accountId: string,
  contactIds: string[],
  { liveOnly = false, consistent = false } = {},
): Promise<Map<string, Contact>> {
  const items = await batchGet(
    contactIds.map((ct) => contactKey(accountId, ct)),
    consistent,
  );
  return new Map(items.filter((item) => !liveOnly || item.deleted_at === undefined).map((item) => [item.id as string, toContact(item)]));
}

/** Of these ids, the live contacts of the account (one batch read per 100). */
export const liveContacts = (accountId: string, contactIds: string[]) => getContacts(accountId, contactIds, { liveOnly: true });

/** The account's live contacts, newest first. */
export async function listContacts(accountId: string, page: CursorPageRequest): Promise<Page<Contact>> {
  const result = await queryIndexPage({ index: keys.contacts.index, partitions: [keys.contacts.partition({ acct: accountId })], ...page });
  return { items: result.items.map(toContact), hasMore: result.hasMore };
}

export type ContactChanges = Partial<Pick<Contact, 'username' | 'phone_number' | 'avatar_url'>>;

/**
 * Applies the changes to a live contact. A new username moves its guard in
 * the same transaction (409 when another contact holds it); undefined when
 * the contact is gone or changed its username meanwhile.
 */
export async function updateContact(current: Contact, changes: ContactChanges): Promise<Contact | undefined> {
  const entries = Object.entries(changes).filter(([, value]) => value !== undefined);
  if (entries.length === 0) return current;
  const write = update().when`attribute_exists(pk) AND attribute_not_exists(deleted_at) AND username = ${current.username}`;
  for (const [field, value] of entries) write.set`${attr(field)} = ${value}`;
  const renamed = changes.username !== undefined && usernameFold(changes.username) !== usernameFold(current.username);
  const failed = await transactNamed([
    ['contact', txUpdate(contactKey(current.account_id, current.id), write)],
    ...(renamed
      ? ([
          [
            'username',
            txPut({ ...usernameKey(current.account_id, changes.username!), contact_id: current.id }, condition`attribute_not_exists(pk)`),
          ],
          ['old', txDelete(usernameKey(current.account_id, current.username))],
        ] as [string, TransactItem][])
      : changes.username !== undefined
        ? ([['username', txPut({ ...usernameKey(current.account_id, changes.username), contact_id: current.id })]] as [
            string,
            TransactItem,
          ][])
        : []),
  ]);
  if (failed.length === 0) return { ...current, ...changes };
  if (failed.includes('username')) throw usernameTaken(changes.username!);
  return undefined;
}

/**
 * Deletes a contact: its item stays as a tombstone (messages it sent keep
 * showing it as it was) but leaves the account's list and frees its
 * username; `also` joins the transaction (the purge record of what follows).
 * False when there was no live contact.
 */
export async function tombstoneContact(current: Contact, also: TransactItems): Promise<boolean> {
  const failed = await transactNamed([
    [
      'contact',
      txUpdate(
        contactKey(current.account_id, current.id),
        update().set`deleted_at = ${nowSeconds()}`.remove`gsi1pk, gsi1sk`.when`attribute_exists(pk) AND attribute_not_exists(deleted_at)`,
      ),
    ],
    // A contact from before usernames had guards has none to free.
    [
      'username',
      txDelete(usernameKey(current.account_id, current.username), condition`attribute_not_exists(pk) OR contact_id = ${current.id}`),
    ],
    ...namedParts('also', also),
  ]);
  return failed.length === 0;
}

/** Transaction part a message send uses to mark its sender active. */
export const touchContactUpdate = (accountId: string, contactId: string, at: number): TransactItem =>
  txUpdate(contactKey(accountId, contactId), update().set`last_active_at = ${at}`.when`attribute_exists(pk)`);
