import * as v from 'valibot';
import { parseItem } from '#shared/db/item-schema';
import { batchGet } from '#shared/db/batch';
import { getItem, query } from '#shared/db/items';
import { keys } from '#shared/db/keys';
import { locatePage, readCollection, readPage, type Key, type PagePosition } from '#shared/data/collections';
import type { ValidationResult } from '#shared/email/result';

/*
 * The email item: its record, keys and place in its collection, and its
 * reads. Adding (email-adds.ts), restoring after a crash (email-restore.ts),
 * the worker's status changes (email-status.ts) and deleting
 * (email-deletes.ts) each live apart, so a handler loads only its own path.
 */

export type EmailStatus = 'pending' | 'processing' | 'completed' | 'error';

export interface EmailRecord {
  id: number;
  account_id: string;
  email: string;
  email_list_id: number | null;
  status: EmailStatus;
  /** Stored but held back until the account has validation credits. */
  awaiting: boolean;
  seq: number;
  result: Omit<ValidationResult, 'email'> | null;
  created_at: number;
}

// Built in a /* @__PURE__ */ call, so that esbuild drops it from functions that never read this item (shared/db/item-schema.ts).
// v.nullish(x, null): null or absent, read as null; v.optional(x, d): absent, read as d.
const emailSchema = /* @__PURE__ */ (() =>
  v.object({
    id: v.number(),
    account_id: v.string(),
    email: v.string(),
    email_list_id: v.nullish(v.number(), null),
    status: v.picklist(['pending', 'processing', 'completed', 'error']),
    awaiting: v.optional(v.boolean(), false),
    seq: v.number(),
    // The validator's own shape (shared/email/result.ts), stored as it made it.
    result: v.nullish(
      v.custom<Omit<ValidationResult, 'email'>>((value) => typeof value === 'object'),
      null,
    ),
    created_at: v.number(),
  }))();

export const toEmailRecord = (item: Record<string, unknown>): EmailRecord => parseItem(emailSchema, item);

/** What a pending email is made of, wherever it comes from: an add, an outbox naming it, a queue message naming it. */
export interface PendingEmail {
  id: number;
  accountId: string;
  address: string;
  listId: number | null;
  seq: number;
  createdAt: number;
  awaiting: boolean;
}

/** An email as its add stored it: pending, no result yet. */
export const pendingEmail = (e: PendingEmail): EmailRecord => ({
  id: e.id,
  account_id: e.accountId,
  email: e.address,
  email_list_id: e.listId,
  status: 'pending',
  awaiting: e.awaiting,
  seq: e.seq,
  result: null,
  created_at: e.createdAt,
});

export const emailKey = (accountId: string, email: number) => keys.email.key({ acct: accountId, email });

/** The item that keeps an address once in a list; it names the email holding it. */
export const guardKey = (accountId: string, list: number, address: string) => keys.listAddress.key({ acct: accountId, list, address });

/** Where new emails go: the account's standalone emails, or a list. */
export type EmailTarget = { kind: 'account' } | { kind: 'list'; listId: number };

export const collectionKey = (accountId: string, target: EmailTarget): Key =>
  target.kind === 'list' ? keys.list.key({ acct: accountId, list: target.listId }) : keys.accountEmails.key({ acct: accountId });

export const targetOf = (email: EmailRecord): EmailTarget =>
  email.email_list_id === null ? { kind: 'account' } : { kind: 'list', listId: email.email_list_id };

/** The stored item of an email: its key, its place in its collection's page index, its fields. */
export const emailItem = (email: EmailRecord) => ({
  ...emailKey(email.account_id, email.id),
  ...keys.members.entry({ collection: collectionKey(email.account_id, targetOf(email)).pk, seq: email.seq }),
  type: 'email',
  ...email,
});

export async function getEmail(accountId: string, id: number): Promise<EmailRecord | undefined> {
  const item = await getItem(emailKey(accountId, id), true);
  return item ? toEmailRecord(item) : undefined;
}

export async function getEmails(accountId: string, ids: number[]): Promise<EmailRecord[]> {
  return (
    await batchGet(
      ids.map((id) => emailKey(accountId, id)),
      true,
    )
  ).map(toEmailRecord);
}

/** One page of a collection; 'missing' when the target is a list that does not exist, undefined when the page is out of range. */
export async function listEmailsPage(
  accountId: string,
  target: EmailTarget,
  page: number,
): Promise<{ emails: EmailRecord[]; position: PagePosition } | 'missing' | undefined> {
  const key = collectionKey(accountId, target);
  const collection = await readCollection(key);
  // A list is its own page index, so this one read also tells whether it exists.
  if (target.kind === 'list' && !collection.item) return 'missing';
  const position = await locatePage(collection, page);
  if (!position) return undefined;
  return { emails: (await readPage(key.pk, position)).map(toEmailRecord), position };
}

/**
 * Up to `limit` of a list's emails after sequence number `afterSeq` (-1:
 * from the first), in sequence order: one Query of the members index
 * (fewer when the items pass 1 MB). An export walks a list with it.
 */
export async function listMembersAfter(accountId: string, listId: number, afterSeq: number, limit: number): Promise<EmailRecord[]> {
  const members = keys.members;
  const items = await query(
    {
      index: members.index,
      partition: members.partition({ collection: collectionKey(accountId, { kind: 'list', listId }).pk }),
      ...(afterSeq >= 0 ? { sort: ['>', members.sortKey({ seq: afterSeq })] as ['>', string] } : {}),
    },
    limit,
    1,
  );
  return items.map(toEmailRecord);
}
