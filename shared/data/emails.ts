import * as v from 'valibot';
import { parseItem } from '#shared/db/item-schema';
import {
  batchGet,
  batchPut,
  namedParts,
  transactNamed,
  txCheck,
  txDelete,
  txPut,
  txUpdate,
  type NamedItems,
  type TransactItem,
} from '#shared/db/batch';
import { attr, condition, update } from '#shared/db/expression';
import { conditionHeld, getItem, query, updateItem } from '#shared/db/items';
import { keys } from '#shared/db/keys';
import { AGAIN, retryOnConflict } from '#shared/db/retry';
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
import { addRejected, listFinished, rejectedAdded } from '#shared/data/email-lists';
import { journalStep, stepRecorded, type Hold } from '#shared/data/idempotency';
import { newNumericIds } from '#shared/data/numeric-ids';
import { currentOutboxes, outboxPut, type OutboxItem } from '#shared/data/outbox';
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

const emailKey = (accountId: string, email: number) => keys.email.key({ acct: accountId, email });
const guardKey = (accountId: string, list: number, address: string) => keys.listAddress.key({ acct: accountId, list, address });

/** Where new emails go: the account's standalone emails, or a list. */
export type EmailTarget = { kind: 'account' } | { kind: 'list'; listId: number };

export const collectionKey = (accountId: string, target: EmailTarget): Key =>
  target.kind === 'list' ? keys.list.key({ acct: accountId, list: target.listId }) : keys.accountEmails.key({ acct: accountId });

/** A transaction holds 100 items: the outbox, a credit debit, and a list's address guards. */
const MAX_ITEMS = 100;
/**
 * Tries of a chunk's transaction when other writers hold its items (the
 * same address, a metered balance): more than elsewhere, as a busy list's
 * concurrent adds meet on their shared addresses by design.
 */
const CHUNK_TRIES = 12;

export interface StoredChunk {
  emails: EmailRecord[];
  /** Where each of `emails` is in the addresses given to `storeEmails`. */
  positions: number[];
  duplicates: string[];
  outbox: OutboxItem;
  /** Committed by an earlier attempt of the same idempotent request. */
  resumed?: boolean;
  /** Its outbox's counts are applied already: nothing of it is left to settle. */
  settled?: boolean;
}

export class ListGoneError extends Error {}

/** An earlier attempt of the request holds the key now: this one must stop writing. */
export class SupersededError extends Error {}

interface Slot {
  address: string;
  id: number;
  seq: number;
  /** Its place in the addresses given to `storeEmails`. */
  position: number;
}

/** What an idempotent request records of each chunk it committed, in the same transaction (`journalStep`). */
interface JournaledChunk {
  outbox: OutboxItem;
  positions: number[];
  duplicates: string[];
  duplicatePositions: number[];
  rejected: number;
}

const CHUNK_STEP = 'chunk:';
const REJECTED_STEP = 'rejected';

const journaledChunks = (hold: Hold | undefined): JournaledChunk[] =>
  Object.entries(hold?.steps ?? {})
    .filter(([name]) => name.startsWith(CHUNK_STEP))
    .map(([, value]) => value as JournaledChunk);

/**
 * Stores accepted addresses as `pending` emails. Sequence numbers for the
 * whole batch come from one atomic `ADD`, ids from this container's block;
 * then each chunk is one transaction of what must hold together — for a list
 * its address guards, the credit debit, and an outbox naming the emails, the
 * work and the counts the collection still has to take in (applied after,
 * exactly once, see `settle` in shared/email/outbox.ts) — followed by the emails themselves in
 * plain batch writes: their ids are fresh, so nothing can conflict, and an
 * outbox still holding its counts is what restores them after a crash
 * (`restoreEmails`). Nothing here retries on another writer's success: a
 * guard that already exists is a duplicate, not a conflict.
 */
export async function storeEmails(
  accountId: string,
  target: EmailTarget,
  addresses: string[],
  rejected: number,
  hold?: Hold,
): Promise<StoredChunk[]> {
  const key = collectionKey(accountId, target);
  const inList = target.kind === 'list';
  // A retry of an idempotent request: the chunks its earlier attempts committed are its own, the rest still to store.
  const journaled = journaledChunks(hold);
  const resumed = journaled.length ? await resumeChunks(accountId, journaled) : [];
  const covered = new Set(journaled.flatMap((j) => [...j.positions, ...j.duplicatePositions]));
  if (journaled.some((j) => j.rejected > 0) || (hold && REJECTED_STEP in hold.steps)) rejected = 0;
  const remaining = addresses.map((address, position) => ({ address, position })).filter((a) => !covered.has(a.position));
  if (remaining.length === 0) {
    if (inList && (rejected > 0 || resumed.length === 0) && !(await rejectedOnly(accountId, target.listId, rejected, hold)))
      throw new ListGoneError();
    return resumed;
  }
  const [[first, ids], balance] = await Promise.all([
    inJoinOrder(key.pk, async () => {
      const seq = await reserveSeqs(key, remaining.length, inList);
      return [seq, seq === undefined ? [] : await newNumericIds(remaining.length)] as const;
    }),
    creditBalance(accountId),
  ]);
  if (first === undefined) throw new ListGoneError();
  const slots = remaining.map(({ address, position }, i) => ({ address, id: ids[i]!, seq: first + i, position }));
  // A journaled chunk's transaction also records it on the idempotency record.
  const perChunk = MAX_ITEMS - (hold ? 3 : 2);
  const chunkCount = inList ? Math.ceil(slots.length / perChunk) : 1;
  const size = Math.ceil(slots.length / chunkCount);
  const chunks = Array.from({ length: chunkCount }, (_, i) => slots.slice(i * size, (i + 1) * size));
  const write = (chunk: Slot[], i: number, credits: { left: number | undefined }) =>
    writeChunk(accountId, target, key, chunk, i === 0 ? rejected : 0, credits, hold);
  if (balance === undefined) return [...resumed, ...(await Promise.all(chunks.map((chunk, i) => write(chunk, i, { left: undefined }))))];
  // A metered account's balance is one item: its chunks debit one after another.
  const credits = { left: balance as number | undefined };
  const stored: StoredChunk[] = [...resumed];
  for (const [i, chunk] of chunks.entries()) stored.push(await write(chunk, i, credits));
  return stored;
}

const joining = new Map<string, Promise<unknown>>();

/**
 * Within a container, one collection's reservations (sequence numbers, then
 * ids) run one after another: the answers to two concurrent reservations
 * can arrive in either order, and ids taken in answer order would cross the
 * sequence numbers, so a page (in sequence order) would not be in id order.
 * A Lambda container serves one request at a time; this orders the local
 * server's concurrent requests.
 */
function inJoinOrder<T>(collection: string, reserve: () => Promise<T>): Promise<T> {
  const turn = (joining.get(collection) ?? Promise.resolve()).catch(() => undefined).then(reserve);
  joining.set(collection, turn);
  void turn.finally(() => joining.get(collection) === turn && joining.delete(collection)).catch(() => undefined);
  return turn;
}

/** An add that stores nothing still counts its rejected entries (once, for an idempotent request); false when the list is gone. */
async function rejectedOnly(accountId: string, listId: number, rejected: number, hold: Hold | undefined): Promise<boolean> {
  if (!hold) return addRejected(accountId, listId, rejected);
  const failed = await transactNamed([
    ['list', rejectedAdded(accountId, listId, rejected)],
    ['step', journalStep(hold, REJECTED_STEP, rejected)],
  ]);
  if (failed.includes('list')) return false;
  if (failed.includes('step') && !(await stepRecorded(hold, REJECTED_STEP))) throw new SupersededError();
  return true;
}

/**
 * The chunks earlier attempts committed, as they stand: emails a crash left
 * unwritten are restored (while their outbox still holds its counts, as the
 * sweeper does), each email is read back in its current state, and a chunk
 * whose outbox was settled meanwhile is marked so.
 */
async function resumeChunks(accountId: string, journaled: JournaledChunk[]): Promise<StoredChunk[]> {
  const current = await currentOutboxes(journaled.map((j) => j.outbox));
  await restoreEmails(journaled.flatMap((j) => current.get(j.outbox.outbox_id) ?? []));
  const found = new Map(
    (
      await getEmails(
        accountId,
        journaled.flatMap((j) => j.outbox.email_ids),
      )
    ).map((e) => [e.id, e]),
  );
  return journaled.map((j) => {
    const outbox = current.get(j.outbox.outbox_id);
    return {
      emails: j.outbox.email_ids.map((id, i) => found.get(id) ?? journaledEmail(j.outbox, i)),
      positions: j.positions,
      duplicates: j.duplicates,
      outbox: outbox ?? j.outbox,
      resumed: true,
      settled: !outbox?.deltas,
    };
  });
}

/** An email as its chunk stored it (pending), from the outbox that names it. */
const journaledEmail = (outbox: OutboxItem, i: number): EmailRecord => ({
  id: outbox.email_ids[i]!,
  account_id: outbox.account_id,
  email: outbox.addresses![i]!,
  email_list_id: outbox.list_id ?? null,
  status: 'pending',
  awaiting: outbox.awaiting,
  seq: outbox.seqs![i]!,
  result: null,
  created_at: outbox.emails_created_at!,
});

async function writeChunk(
  accountId: string,
  target: EmailTarget,
  key: Key,
  slots: Slot[],
  rejected: number,
  credits: { left: number | undefined },
  hold?: Hold,
): Promise<StoredChunk> {
  const inList = target.kind === 'list';
  const duplicates: string[] = [];
  const duplicatePositions: number[] = [];
  // Each failed attempt drops at least one duplicate or re-reads the balance: bounded by the chunk.
  for (let attempt = 0; attempt <= slots.length + 2; attempt++) {
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
        ...membershipDeltas(
          emails.map((e) => e.seq),
          1,
          counters,
        ),
        // The round of work this add joins (or starts): endListRound measures it.
        ...(inList && slots.length ? { ifAbsent: { work_started_at: Math.floor(now / 1000) } } : {}),
      },
    });
    const items: NamedItems = [['outbox', outbox.put]];
    if (metered && !awaiting && slots.length) items.push(['debit', debitCredits(accountId, slots.length)]);
    if (inList) {
      for (const email of emails) {
        const guard = { ...guardKey(accountId, target.listId, email.email), email_id: email.id };
        items.push([`guard:${email.id}`, txPut(guard, condition`attribute_not_exists(pk)`)]);
      }
    }
    const step = `${CHUNK_STEP}${outbox.item.outbox_id}`;
    if (hold) {
      const journaled: JournaledChunk = {
        outbox: outbox.item,
        positions: slots.map((s) => s.position),
        duplicates,
        duplicatePositions,
        rejected,
      };
      items.push(['step', journalStep(hold, step, journaled)]);
    }
    const failed = await transactNamed(items, CHUNK_TRIES);
    // A transaction the SDK sent again after its answer was lost meets its own writes: recorded, it committed.
    const committed = failed.length === 0 || (hold !== undefined && (await stepRecorded(hold, step)));
    if (committed) {
      if (metered && !awaiting) credits.left! -= slots.length;
      await batchPut(emails.map(emailItem));
      return { emails, positions: slots.map((s) => s.position), duplicates, outbox: outbox.item };
    }
    if (failed.includes('step')) throw new SupersededError();
    if (failed.includes('debit')) credits.left = await creditBalance(accountId);
    const taken = new Set(failed.filter((name) => name.startsWith('guard:')).map((name) => Number(name.slice(6))));
    for (const slot of slots.filter((s) => taken.has(s.id))) {
      duplicates.push(slot.address.toLowerCase());
      duplicatePositions.push(slot.position);
    }
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
        : [
            {
              id,
              account_id: outbox.account_id,
              email: addresses[i]!,
              email_list_id: listId,
              status: 'pending',
              awaiting: outbox.awaiting,
              seq: seqs[i]!,
              result: null,
              created_at: createdAt,
            },
          ],
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
  const items: NamedItems = emails.flatMap((email): NamedItems => [
    [`email:${email.id}`, txPut(emailItem(email), condition`attribute_not_exists(pk)`)],
    ...(listId === null
      ? []
      : [
          [
            `guard:${email.id}`,
            txCheck(guardKey(email.account_id, listId, email.email), condition`email_id = ${email.id}`),
          ] as NamedItems[number],
        ]),
  ]);
  if (listId !== null)
    items.push(['list', txCheck(keys.list.key({ acct: emails[0]!.account_id, list: listId }), condition`attribute_exists(pk)`)]);
  return (await transactNamed(items)).length === 0;
}

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

export type Outcome = { status: 'completed'; result: EmailRecord['result'] } | { status: 'error'; listError?: boolean };

/** The stored item of an email: its key, its place in its collection's page index, its fields. */
export const emailItem = (email: EmailRecord) => ({
  ...emailKey(email.account_id, email.id),
  ...keys.members.entry({ collection: collectionKey(email.account_id, targetOf(email)).pk, seq: email.seq }),
  type: 'email',
  ...email,
});

/**
 * The email leaves pending/processing, only from an unfinished, released
 * state. Written whole (the worker knows every field): a put costs less
 * than an update that rewrites the item and its index entry anyway.
 */
const finishPut = (email: EmailRecord, outcome: Outcome): TransactItem =>
  txPut(
    emailItem({ ...email, status: outcome.status, result: outcome.status === 'completed' ? outcome.result : null }),
    condition`${attr('status')} IN (${'pending'}, ${'processing'}) AND awaiting = ${false}`,
  );

/**
 * Records a validation's end exactly once: the email leaves pending or
 * processing, and its list's pending counter drops, in one transaction. A
 * redelivered message finds the email already finished and changes nothing.
 */
export async function finishEmail(email: EmailRecord, outcome: Outcome): Promise<boolean> {
  const items: NamedItems = [['email', finishPut(email, outcome)]];
  if (email.email_list_id !== null) {
    const listError = outcome.status === 'error' && outcome.listError === true;
    items.push(['list', listFinished(email.account_id, email.email_list_id, 1, listError)]);
  }
  return (await transactNamed(items)).length === 0;
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
    const items: NamedItems = done.map((d) => [`email:${d.email.id}`, finishPut(d.email, d.outcome)]);
    if (listId !== null) items.push(['list', listFinished(done[0]!.email.account_id, listId, done.length, false)]);
    if ((await transactNamed(items)).length === 0) return done.map((d) => d.email);
  }
  const finished = await Promise.all(done.map(async (d) => ((await finishEmail(d.email, d.outcome)) ? d.email : undefined)));
  return finished.filter((e): e is EmailRecord => e !== undefined);
}

/** Marks emails as being worked on (visible as `processing`); those already past pending stay as they are. */
export async function markProcessing(emails: EmailRecord[]): Promise<void> {
  await Promise.all(
    emails
      .filter((e) => e.status === 'pending')
      .map((email) =>
        conditionHeld(
          updateItem(
            emailKey(email.account_id, email.id),
            update().set`${attr('status')} = ${'processing'}`.when`${attr('status')} = ${'pending'}`,
          ),
        ),
      ),
  );
}

/** Transaction part: a held email is released for validation. */
export const emailReleased = (email: EmailRecord): TransactItem =>
  txUpdate(emailKey(email.account_id, email.id), update().set`awaiting = ${false}`.when`awaiting = ${true}`);

/** Deletes an email and takes it out of its collection's counts; false when it did not exist. */
export function deleteEmail(accountId: string, id: number): Promise<boolean> {
  return retryOnConflict(async () => {
    const email = await getEmail(accountId, id);
    if (!email) return false;
    const target = targetOf(email);
    const key = collectionKey(accountId, target);
    const unfinished = email.status === 'pending' || email.status === 'processing';
    const counters: Record<string, number> =
      target.kind === 'list' && unfinished ? { [email.awaiting ? 'awaiting_count' : 'pending_count']: -1 } : {};
    // Never re-create a list that was deleted meanwhile: its emails are already gone for readers.
    const [collection, ...blocks] = deltaUpdates(key, membershipDeltas([email.seq], -1, counters), target.kind === 'list');
    const items: NamedItems = [
      // The worker may finish it meanwhile: then the counters to touch differ, so read again.
      ['email', txDelete(emailKey(accountId, id), condition`${attr('status')} = ${email.status} AND awaiting = ${email.awaiting}`)],
      ['collection', collection!],
      ...namedParts('block', blocks),
    ];
    if (target.kind === 'list') items.push(['guard', txDelete(guardKey(accountId, target.listId, email.email))]);
    const failed = await transactNamed(items);
    if (failed.includes('collection')) return false;
    if (failed.length > 0) return AGAIN;
    await compact(key, email.seq);
    return true;
  });
}

const targetOf = (email: EmailRecord): EmailTarget =>
  email.email_list_id === null ? { kind: 'account' } : { kind: 'list', listId: email.email_list_id };

/** One batch of a deleted list's keys to purge: emails, their address guards, then the page index's block items. */
export async function listEmailKeys(accountId: string, listId: number, limit: number): Promise<Key[]> {
  const collection = keys.list.key({ acct: accountId, list: listId }).pk;
  const read = (index: typeof keys.members | typeof keys.blocks) =>
    query({ index: index.index, partition: index.partition({ collection }) }, limit, 1);
  const members = await read(keys.members);
  if (members.length) {
    return members.flatMap((item) => [{ pk: item.pk as string, sk: item.sk as string }, guardKey(accountId, listId, item.email as string)]);
  }
  return (await read(keys.blocks)).map((item) => ({ pk: item.pk as string, sk: item.sk as string }));
}
