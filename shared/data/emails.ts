import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet, transactWrite, type TransactItems } from '#shared/db/batch';
import { db, tableName } from '#shared/db/client';
import { emailKeys } from '#shared/db/keys';
import { creditBalance, debitCredits } from '#shared/data/accounts';
import {
  appendMembers,
  collectionUpdate,
  emptyUpdate,
  locatePage,
  readCollection,
  readPage,
  removeMember,
  type Collection,
  type Key,
  type PagePosition,
} from '#shared/data/collections';
import { cancellationCodes } from '#shared/data/errors';
import { newNumericIds } from '#shared/data/numeric-ids';
import { outboxPut, type OutboxItem } from '#shared/data/outbox';
import type { ValidationResult } from '#shared/email/result';
import { nowSeconds } from '#shared/util/ids';

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

export const toEmailRecord = (item: Record<string, unknown>): EmailRecord => ({
  id: Number(item.id),
  account_id: item.account_id as string,
  email: item.email as string,
  email_list_id: item.email_list_id === undefined || item.email_list_id === null ? null : Number(item.email_list_id),
  status: item.status as EmailStatus,
  awaiting: item.awaiting === true,
  seq: Number(item.seq),
  result: (item.result as EmailRecord['result']) ?? null,
  created_at: Number(item.created_at),
});

/** Where new emails go: the account's standalone emails, or a list. */
export type EmailTarget = { kind: 'account' } | { kind: 'list'; listId: number };

const collectionKey = (accountId: string, target: EmailTarget): Key =>
  target.kind === 'list' ? emailKeys.list(accountId, target.listId) : emailKeys.accountEmails(accountId);

/** Each address costs two items in a list (email + address guard); transactions hold 100. */
const CHUNK = 45;
const MAX_ATTEMPTS = 25;

export interface StoredChunk {
  emails: EmailRecord[];
  duplicates: string[];
  outbox: OutboxItem;
}

export class ListGoneError extends Error {}

/**
 * Stores accepted addresses as `pending` emails, all-or-nothing per chunk:
 * the emails, their place in the collection's page index, the list's
 * counters, the credit debit and a transactional-outbox record listing the
 * work for the queue. Addresses already in the list come back as duplicates.
 */
export async function storeEmails(
  accountId: string,
  target: EmailTarget,
  addresses: string[],
  rejected: number,
): Promise<StoredChunk[]> {
  const chunks: StoredChunk[] = [];
  for (let i = 0; i < addresses.length; i += CHUNK) {
    chunks.push(await storeChunk(accountId, target, addresses.slice(i, i + CHUNK), i === 0 ? rejected : 0));
  }
  if (addresses.length === 0 && rejected > 0 && target.kind === 'list') await addRejected(accountId, target.listId, rejected);
  return chunks;
}

async function storeChunk(accountId: string, target: EmailTarget, addresses: string[], rejected: number): Promise<StoredChunk> {
  const key = collectionKey(accountId, target);
  for (let attempt = 0; ; attempt++) {
    const collection = await readCollection(key);
    if (target.kind === 'list' && !collection.item) throw new ListGoneError();
    const duplicates = target.kind === 'list' ? await addressesInList(accountId, target.listId, addresses) : new Set<string>();
    const fresh = addresses.filter((a) => !duplicates.has(a.toLowerCase()));
    const extraRejected = rejected + (addresses.length - fresh.length);
    try {
      return await writeChunk(accountId, target, collection, fresh, extraRejected, [...duplicates]);
    } catch (error) {
      const codes = cancellationCodes(error);
      if (!codes?.includes('ConditionalCheckFailed') || attempt >= MAX_ATTEMPTS) throw error;
      // Another add won the race for the sequence, the credits or an address: re-read and retry.
      await new Promise((r) => setTimeout(r, Math.random() * 20 * (attempt + 1)));
    }
  }
}

async function writeChunk(
  accountId: string,
  target: EmailTarget,
  collection: Collection,
  addresses: string[],
  rejected: number,
  duplicates: string[],
): Promise<StoredChunk> {
  const credits = await creditBalance(accountId);
  const metered = credits !== undefined;
  const awaiting = metered && credits < addresses.length;
  const ids = await newNumericIds(addresses.length, collection.lastId);
  const parts = emptyUpdate();
  const seqs = addresses.length ? appendMembers(collection, ids, parts, target.kind === 'list') : [];
  const now = nowSeconds();
  if (target.kind === 'list') {
    parts.add.push(awaiting ? 'awaiting_count :n' : 'pending_count :n');
    parts.values[':n'] = addresses.length;
    if (addresses.length) {
      // The round of work this add joins (or starts): endListRound measures it.
      parts.set.push('work_started_at = if_not_exists(work_started_at, :work_started_at)');
      parts.values[':work_started_at'] = now;
    }
    if (rejected > 0) {
      parts.add.push('rejected_count :rejected');
      parts.values[':rejected'] = rejected;
    }
    if (!addresses.length) parts.conditions.push('attribute_exists(pk)');
  }
  const emails: EmailRecord[] = addresses.map((email, i) => ({
    id: ids[i]!,
    account_id: accountId,
    email,
    email_list_id: target.kind === 'list' ? target.listId : null,
    status: 'pending',
    awaiting,
    seq: seqs[i]!,
    result: null,
    created_at: now,
  }));
  const outbox = outboxPut(accountId, emails.map((e) => e.id), awaiting);
  const items: TransactItems = [];
  if (parts.set.length || parts.add.length) items.push({ Update: collectionUpdate(collection.key, parts) });
  if (metered && !awaiting && addresses.length) items.push({ Update: debitCredits(accountId, addresses.length) });
  if (addresses.length) items.push({ Put: outbox.put });
  for (const email of emails) {
    items.push({
      Put: {
        TableName: tableName(),
        Item: { ...emailKeys.email(accountId, email.id), ...emailKeys.member(collection.key.pk, email.seq), type: 'email', ...email },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    });
    if (target.kind === 'list') {
      items.push({
        Put: {
          TableName: tableName(),
          Item: { ...emailKeys.listAddress(accountId, target.listId, email.email), email_id: email.id },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      });
    }
  }
  if (items.length) await transactWrite({ TransactItems: items });
  return { emails, duplicates, outbox: outbox.item };
}

async function addressesInList(accountId: string, listId: number, addresses: string[]): Promise<Set<string>> {
  if (addresses.length === 0) return new Set();
  const keys = [...new Set(addresses.map((a) => a.toLowerCase()))].map((a) => emailKeys.listAddress(accountId, listId, a));
  const found = new Set<string>();
  for (const item of await batchGet(keys, true)) found.add((item.pk as string).split('#ADDR#')[1]!);
  return found;
}

async function addRejected(accountId: string, listId: number, rejected: number) {
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: emailKeys.list(accountId, listId),
      UpdateExpression: 'ADD rejected_count :n',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':n': rejected },
    }),
  );
}

export async function getEmail(accountId: string, id: number): Promise<EmailRecord | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: emailKeys.email(accountId, id), ConsistentRead: true }));
  return out.Item ? toEmailRecord(out.Item) : undefined;
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
  const position = locatePage(collection, page);
  if (!position) return undefined;
  return { emails: (await readPage(key.pk, position)).map(toEmailRecord), position };
}

/**
 * Records a validation's end exactly once: the email leaves pending or
 * processing, and its list's pending counter drops, in one transaction. A
 * redelivered message finds the email already finished and changes nothing.
 */
export async function finishEmail(
  email: EmailRecord,
  outcome: { status: 'completed'; result: EmailRecord['result'] } | { status: 'error'; listError?: boolean },
): Promise<boolean> {
  const items: TransactItems = [
    {
      Update: {
        TableName: tableName(),
        Key: emailKeys.email(email.account_id, email.id),
        UpdateExpression: 'SET #status = :status, #result = :result',
        ConditionExpression: '#status IN (:pending, :processing) AND awaiting = :false',
        ExpressionAttributeNames: { '#status': 'status', '#result': 'result' },
        ExpressionAttributeValues: {
          ':status': outcome.status,
          ':result': outcome.status === 'completed' ? outcome.result : null,
          ':pending': 'pending',
          ':processing': 'processing',
          ':false': false,
        },
      },
    },
  ];
  if (email.email_list_id !== null) {
    const listError = outcome.status === 'error' && outcome.listError === true;
    items.push({
      Update: {
        TableName: tableName(),
        Key: emailKeys.list(email.account_id, email.email_list_id),
        UpdateExpression: `ADD pending_count :minus${listError ? ' SET has_error = :true' : ''}`,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':minus': -1, ...(listError ? { ':true': true } : {}) },
      },
    });
  }
  try {
    await transactWrite({ TransactItems: items });
    return true;
  } catch (error) {
    if (cancellationCodes(error)?.includes('ConditionalCheckFailed')) return false;
    throw error;
  }
}

/** Marks an email as being worked on (visible as `processing`); harmless if it already is. */
export async function markProcessing(email: EmailRecord): Promise<void> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: emailKeys.email(email.account_id, email.id),
        UpdateExpression: 'SET #status = :processing',
        ConditionExpression: '#status = :pending',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':processing': 'processing', ':pending': 'pending' },
      }),
    );
  } catch (error) {
    if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
  }
}

/** Deletes an email and takes it out of its collection's counts; false when it did not exist. */
export async function deleteEmail(accountId: string, id: number): Promise<boolean> {
  for (let attempt = 0; ; attempt++) {
    const email = await getEmail(accountId, id);
    if (!email) return false;
    const target: EmailTarget = email.email_list_id === null ? { kind: 'account' } : { kind: 'list', listId: email.email_list_id };
    const parts = emptyUpdate();
    removeMember(email.seq, parts);
    const unfinished = email.status === 'pending' || email.status === 'processing';
    if (target.kind === 'list') {
      // Never recreate a list that was deleted meanwhile: its emails are already gone for readers.
      parts.conditions.push('attribute_exists(pk)');
      if (unfinished) parts.add.push(email.awaiting ? 'awaiting_count :minus_one' : 'pending_count :minus_one');
    }
    const items: TransactItems = [
      {
        Delete: {
          TableName: tableName(),
          Key: emailKeys.email(accountId, id),
          // The worker may finish it meanwhile: then the counters to touch differ, so retry.
          ConditionExpression: '#status = :status AND awaiting = :awaiting',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':status': email.status, ':awaiting': email.awaiting },
        },
      },
      { Update: collectionUpdate(collectionKey(accountId, target), parts) },
    ];
    if (target.kind === 'list') {
      items.push({ Delete: { TableName: tableName(), Key: emailKeys.listAddress(accountId, target.listId, email.email) } });
    }
    try {
      await transactWrite({ TransactItems: items });
      return true;
    } catch (error) {
      const codes = cancellationCodes(error);
      if (codes?.[1] === 'ConditionalCheckFailed' && target.kind === 'list') return false;
      if (!codes?.includes('ConditionalCheckFailed') || attempt >= MAX_ATTEMPTS) throw error;
    }
  }
}

/** One batch of a deleted list's email and address-guard keys, for purging. */
export async function listEmailKeys(accountId: string, listId: number, limit: number): Promise<Key[]> {
  const out = await db().send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': emailKeys.membersPartition(emailKeys.list(accountId, listId).pk) },
      Limit: limit,
    }),
  );
  return (out.Items ?? []).flatMap((item) => [
    { pk: item.pk as string, sk: item.sk as string },
    emailKeys.listAddress(accountId, listId, item.email as string),
  ]);
}
