import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { backoff, batchGet, batchPut, transactNamed, transactWrite, type NamedItems, type TransactItems } from '#shared/db/batch';
import { db, tableName } from '#shared/db/client';
import { emailKeys } from '#shared/db/keys';
import { creditBalance, debitCredits } from '#shared/data/accounts';
import {
  compact,
  deltaUpdates,
  locatePage,
  membershipDeltas,
  readCollection,
  readPage,
  reserveSeqs,
  type Key,
  type PagePosition,
} from '#shared/data/collections';
import { cancellationCodes, isConditionFailure } from '#shared/data/errors';
import { newNumericIds } from '#shared/data/numeric-ids';
import { outboxPut, type OutboxItem } from '#shared/data/outbox';
import type { ValidationResult } from '#shared/email/result';

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

export const collectionKey = (accountId: string, target: EmailTarget): Key =>
  target.kind === 'list' ? emailKeys.list(accountId, target.listId) : emailKeys.accountEmails(accountId);

/** A transaction holds 100 items: the outbox, a credit debit, and a list's address guards. */
const MAX_ITEMS = 100;
/** Conflicting transactions (another writer on the same item) are retried this often. */
const MAX_CONFLICTS = 6;

export interface StoredChunk {
  emails: EmailRecord[];
  duplicates: string[];
  outbox: OutboxItem;
}

export class ListGoneError extends Error {}

interface Slot {
  address: string;
  id: number;
  seq: number;
}

/**
 * Stores accepted addresses as `pending` emails. Sequence numbers for the
 * whole batch come from one atomic `ADD`, ids from this container's block;
 * then each chunk is one transaction of what must hold together — for a list
 * its address guards, the credit debit, and an outbox naming the emails, the
 * work and the counts the collection still has to take in (applied after,
 * exactly once, see `settleOutboxes`) — followed by the emails themselves in
 * plain batch writes: their ids are fresh, so nothing can conflict, and an
 * outbox still holding its counts is what restores them after a crash
 * (`restoreEmails`). Nothing here retries on another writer's success: a
 * guard that already exists is a duplicate, not a conflict.
 */
export async function storeEmails(accountId: string, target: EmailTarget, addresses: string[], rejected: number): Promise<StoredChunk[]> {
  const key = collectionKey(accountId, target);
  const inList = target.kind === 'list';
  if (addresses.length === 0) {
    if (inList) await addRejected(accountId, target.listId, rejected);
    return [];
  }
  const [first, balance, ids] = await Promise.all([
    reserveSeqs(key, addresses.length, inList),
    creditBalance(accountId),
    newNumericIds(addresses.length),
  ]);
  if (first === undefined) throw new ListGoneError();
  const slots = addresses.map((address, i) => ({ address, id: ids[i]!, seq: first + i }));
  const chunkCount = inList ? Math.ceil(slots.length / (MAX_ITEMS - 2)) : 1;
  const size = Math.ceil(slots.length / chunkCount);
  const chunks = Array.from({ length: chunkCount }, (_, i) => slots.slice(i * size, (i + 1) * size));
  const write = (chunk: Slot[], i: number, credits: { left: number | undefined }) =>
    writeChunk(accountId, target, key, chunk, i === 0 ? rejected : 0, credits);
  if (balance === undefined) return Promise.all(chunks.map((chunk, i) => write(chunk, i, { left: undefined })));
  // A metered account's balance is one item: its chunks debit one after another.
  const credits = { left: balance as number | undefined };
  const stored: StoredChunk[] = [];
  for (const [i, chunk] of chunks.entries()) stored.push(await write(chunk, i, credits));
  return stored;
}

async function writeChunk(
  accountId: string,
  target: EmailTarget,
  key: Key,
  slots: Slot[],
  rejected: number,
  credits: { left: number | undefined },
): Promise<StoredChunk> {
  const inList = target.kind === 'list';
  const duplicates: string[] = [];
  let conflicts = 0;
  // Each failed attempt drops at least one duplicate or re-reads the balance: bounded by the chunk.
  for (let attempt = 0; attempt <= slots.length + MAX_CONFLICTS + 2; attempt++) {
    const metered = credits.left !== undefined;
    const awaiting = metered && credits.left! < slots.length;
    const now = Date.now();
    const emails: EmailRecord[] = slots.map((s) => ({
      id: s.id,
      account_id: accountId,
      email: s.address,
      email_list_id: inList ? target.listId : null,
      status: 'pending',
      awaiting,
      seq: s.seq,
      result: null,
      created_at: Math.floor(now / 1000),
    }));
    const counters: Record<string, number> = inList
      ? { [awaiting ? 'awaiting_count' : 'pending_count']: slots.length, rejected_count: rejected + duplicates.length }
      : {};
    const outbox = outboxPut(accountId, {
      emailIds: emails.map((e) => e.id),
      addresses: emails.map((e) => e.email),
      seqs: emails.map((e) => e.seq),
      listId: inList ? target.listId : null,
      emailsCreatedAt: emails[0]?.created_at,
      awaiting,
      collection: key,
      mustExist: inList,
      deltas: {
        ...membershipDeltas(emails.map((e) => e.seq), 1, counters),
        // The round of work this add joins (or starts): endListRound measures it.
        ...(inList && slots.length ? { ifAbsent: { work_started_at: Math.floor(now / 1000) } } : {}),
      },
    });
    const items: NamedItems = [['outbox', { Put: outbox.put }]];
    if (metered && !awaiting && slots.length) items.push(['debit', { Update: debitCredits(accountId, slots.length) }]);
    if (inList) {
      for (const email of emails) {
        items.push([
          `guard:${email.id}`,
          {
            Put: {
              TableName: tableName(),
              Item: { ...emailKeys.listAddress(accountId, target.listId, email.email), email_id: email.id },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
        ]);
      }
    }
    let failed: string[];
    try {
      failed = await transactNamed(items);
    } catch (error) {
      // Another writer held one of these items (the same address, the balance) past the retries: back off, try again.
      if (!cancellationCodes(error)?.includes('TransactionConflict') || ++conflicts > MAX_CONFLICTS) throw error;
      await backoff(conflicts + 2);
      continue;
    }
    if (failed.length === 0) {
      if (metered && !awaiting) credits.left! -= slots.length;
      await batchPut(emails.map(emailItem));
      return { emails, duplicates, outbox: outbox.item };
    }
    if (failed.includes('debit')) credits.left = await creditBalance(accountId);
    const taken = new Set(failed.filter((name) => name.startsWith('guard:')).map((name) => Number(name.slice(6))));
    for (const slot of slots.filter((s) => taken.has(s.id))) duplicates.push(slot.address.toLowerCase());
    slots = slots.filter((s) => !taken.has(s.id));
    if (failed.includes('outbox')) throw new Error('a fresh outbox id already exists');
  }
  throw new Error('storing a chunk did not settle');
}

/**
 * After a crash between an add's transaction and its batch writes, the
 * emails that an unsettled outbox (one still holding its counts) names may
 * be missing: each is written again while still absent — and, in a list,
 * only while its address guard still names it and the list exists, so an
 * email deleted or a list deleted meanwhile stays deleted. Returns how many
 * were restored.
 */
export async function restoreEmails(outboxes: OutboxItem[]): Promise<number> {
  let restored = 0;
  for (const outbox of outboxes) {
    const { addresses, seqs, emails_created_at: createdAt } = outbox;
    if (!outbox.deltas || !addresses || !seqs || createdAt === undefined) continue;
    const found = new Set((await getEmails(outbox.account_id, outbox.email_ids)).map((e) => e.id));
    const listId = outbox.list_id ?? null;
    const missing = outbox.email_ids.flatMap((id, i): EmailRecord[] =>
      found.has(id)
        ? []
        : [{ id, account_id: outbox.account_id, email: addresses[i]!, email_list_id: listId, status: 'pending', awaiting: outbox.awaiting, seq: seqs[i]!, result: null, created_at: createdAt }],
    );
    // In a list each email takes two items (itself and its guard's check), beside the list's check.
    const perTransaction = listId === null ? MAX_ITEMS : Math.floor((MAX_ITEMS - 1) / 2);
    for (let i = 0; i < missing.length; i += perTransaction) {
      const part = missing.slice(i, i + perTransaction);
      if (await restoreTogether(part, listId)) restored += part.length;
      // One of them was deleted meanwhile (or the list was): the rest one by one.
      else if (part.length > 1) for (const email of part) if (await restoreTogether([email], listId)) restored++;
    }
  }
  return restored;
}

async function restoreTogether(emails: EmailRecord[], listId: number | null): Promise<boolean> {
  const items: TransactItems = emails.flatMap((email): TransactItems => [
    { Put: { TableName: tableName(), Item: emailItem(email), ConditionExpression: 'attribute_not_exists(pk)' } },
    ...(listId === null
      ? []
      : [
          {
            ConditionCheck: {
              TableName: tableName(),
              Key: emailKeys.listAddress(email.account_id, listId, email.email),
              ConditionExpression: 'email_id = :id',
              ExpressionAttributeValues: { ':id': email.id },
            },
          },
        ]),
  ]);
  if (listId !== null) {
    items.push({ ConditionCheck: { TableName: tableName(), Key: emailKeys.list(emails[0]!.account_id, listId), ConditionExpression: 'attribute_exists(pk)' } });
  }
  try {
    await transactWrite({ TransactItems: items });
    return true;
  } catch (error) {
    if (cancellationCodes(error)?.includes('ConditionalCheckFailed')) return false;
    throw error;
  }
}

async function addRejected(accountId: string, listId: number, rejected: number) {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: emailKeys.list(accountId, listId),
        UpdateExpression: 'ADD rejected_count :n',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':n': rejected },
      }),
    );
  } catch (error) {
    if (isConditionFailure(error)) throw new ListGoneError();
    throw error;
  }
}

export async function getEmail(accountId: string, id: number): Promise<EmailRecord | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: emailKeys.email(accountId, id), ConsistentRead: true }));
  return out.Item ? toEmailRecord(out.Item) : undefined;
}

export async function getEmails(accountId: string, ids: number[]): Promise<EmailRecord[]> {
  return (await batchGet(ids.map((id) => emailKeys.email(accountId, id)), true)).map(toEmailRecord);
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

export type Outcome = { status: 'completed'; result: EmailRecord['result'] } | { status: 'error'; listError?: boolean };

/** The stored item of an email: its key, its place in its collection's page index, its fields. */
export const emailItem = (email: EmailRecord) => ({
  ...emailKeys.email(email.account_id, email.id),
  ...emailKeys.member(
    collectionKey(email.account_id, email.email_list_id === null ? { kind: 'account' } : { kind: 'list', listId: email.email_list_id }).pk,
    email.seq,
  ),
  type: 'email',
  ...email,
});

/**
 * The email leaves pending/processing, only from an unfinished, released
 * state. Written whole (the worker knows every field): a put costs less
 * than an update that rewrites the item and its index entry anyway.
 */
const finishPut = (email: EmailRecord, outcome: Outcome) => ({
  TableName: tableName(),
  Item: emailItem({ ...email, status: outcome.status, result: outcome.status === 'completed' ? outcome.result : null }),
  ConditionExpression: '#status IN (:pending, :processing) AND awaiting = :false',
  ExpressionAttributeNames: { '#status': 'status' },
  ExpressionAttributeValues: { ':pending': 'pending', ':processing': 'processing', ':false': false },
});

const listFinished = (accountId: string, listId: number, count: number, listError: boolean) => ({
  TableName: tableName(),
  Key: emailKeys.list(accountId, listId),
  UpdateExpression: `ADD pending_count :minus${listError ? ' SET has_error = :true' : ''}`,
  ConditionExpression: 'attribute_exists(pk)',
  ExpressionAttributeValues: { ':minus': -count, ...(listError ? { ':true': true } : {}) },
});

/**
 * Records a validation's end exactly once: the email leaves pending or
 * processing, and its list's pending counter drops, in one transaction. A
 * redelivered message finds the email already finished and changes nothing.
 */
export async function finishEmail(email: EmailRecord, outcome: Outcome): Promise<boolean> {
  const items: TransactItems = [{ Put: finishPut(email, outcome) }];
  if (email.email_list_id !== null) {
    const listError = outcome.status === 'error' && outcome.listError === true;
    items.push({ Update: listFinished(email.account_id, email.email_list_id, 1, listError) });
  }
  try {
    await transactWrite({ TransactItems: items });
    return true;
  } catch (error) {
    if (cancellationCodes(error)?.includes('ConditionalCheckFailed')) return false;
    throw error;
  }
}

/**
 * Finishes several emails of one list (or standalone) in one transaction,
 * with one counter change; if any of them was finished meanwhile (a
 * redelivery), each is finished on its own instead. Returns those finished here.
 */
export async function finishEmails(done: { email: EmailRecord; outcome: Outcome }[]): Promise<EmailRecord[]> {
  if (done.length === 0) return [];
  const listId = done[0]!.email.email_list_id;
  const sameList = done.every((d) => d.email.email_list_id === listId && d.outcome.status === 'completed');
  if (done.length > 1 && sameList && done.length < MAX_ITEMS) {
    const items: TransactItems = done.map((d) => ({ Put: finishPut(d.email, d.outcome) }));
    if (listId !== null) items.push({ Update: listFinished(done[0]!.email.account_id, listId, done.length, false) });
    try {
      await transactWrite({ TransactItems: items });
      return done.map((d) => d.email);
    } catch (error) {
      if (!cancellationCodes(error)?.includes('ConditionalCheckFailed')) throw error;
    }
  }
  const finished = await Promise.all(done.map(async (d) => ((await finishEmail(d.email, d.outcome)) ? d.email : undefined)));
  return finished.filter((e): e is EmailRecord => e !== undefined);
}

/** Marks emails as being worked on (visible as `processing`); those already past pending stay as they are. */
export async function markProcessing(emails: EmailRecord[]): Promise<void> {
  await Promise.all(
    emails
      .filter((e) => e.status === 'pending')
      .map(async (email) => {
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
          if (!isConditionFailure(error)) throw error;
        }
      }),
  );
}

/** Deletes an email and takes it out of its collection's counts; false when it did not exist. */
export async function deleteEmail(accountId: string, id: number): Promise<boolean> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const email = await getEmail(accountId, id);
    if (!email) return false;
    const target: EmailTarget = email.email_list_id === null ? { kind: 'account' } : { kind: 'list', listId: email.email_list_id };
    const key = collectionKey(accountId, target);
    const unfinished = email.status === 'pending' || email.status === 'processing';
    const counters: Record<string, number> =
      target.kind === 'list' && unfinished ? { [email.awaiting ? 'awaiting_count' : 'pending_count']: -1 } : {};
    const items: NamedItems = [
      [
        'email',
        {
          Delete: {
            TableName: tableName(),
            Key: emailKeys.email(accountId, id),
            // The worker may finish it meanwhile: then the counters to touch differ, so read again.
            ConditionExpression: '#status = :status AND awaiting = :awaiting',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: { ':status': email.status, ':awaiting': email.awaiting },
          },
        },
      ],
      // Never re-create a list that was deleted meanwhile: its emails are already gone for readers.
      ...deltaUpdates(key, membershipDeltas([email.seq], -1, counters), target.kind === 'list' ? 'attribute_exists(pk)' : undefined).map(
        (item, i): NamedItems[number] => [i === 0 ? 'collection' : `block:${i}`, item],
      ),
    ];
    if (target.kind === 'list') {
      items.push(['guard', { Delete: { TableName: tableName(), Key: emailKeys.listAddress(accountId, target.listId, email.email) } }]);
    }
    const failed = await transactNamed(items);
    if (failed.includes('collection')) return false;
    if (failed.length === 0) {
      await compact(key, email.seq);
      return true;
    }
    await backoff(attempt + 1);
  }
  throw new Error(`email ${id} kept changing while being deleted`);
}

/** One batch of a deleted list's keys to purge: emails, their address guards, then the page index's block items. */
export async function listEmailKeys(accountId: string, listId: number, limit: number): Promise<Key[]> {
  const collectionPk = emailKeys.list(accountId, listId).pk;
  const query = async (partition: string) =>
    (
      await db().send(
        new QueryCommand({
          TableName: tableName(),
          IndexName: 'gsi1',
          KeyConditionExpression: 'gsi1pk = :pk',
          ExpressionAttributeValues: { ':pk': partition },
          Limit: limit,
        }),
      )
    ).Items ?? [];
  const members = await query(emailKeys.membersPartition(collectionPk));
  if (members.length) {
    return members.flatMap((item) => [
      { pk: item.pk as string, sk: item.sk as string },
      emailKeys.listAddress(accountId, listId, item.email as string),
    ]);
  }
  return (await query(emailKeys.blocksPartition(collectionPk))).map((item) => ({ pk: item.pk as string, sk: item.sk as string }));
}
