import { batchPut, transactNamed, txPut, type NamedItems, TRANSACTION_MAX_ITEMS } from '#shared/db/batch';
import { condition } from '#shared/db/expression';
import { creditBalance, debitCredits } from '#shared/data/accounts';
import { membershipDeltas, reserveSeqs, type Key } from '#shared/data/collections';
import { addRejected, rejectedAdded } from '#shared/data/email-lists';
import { outboxEmails, restoreEmails } from '#shared/data/email-restore';
import { collectionKey, emailItem, getEmails, guardKey, pendingEmail, type EmailRecord, type EmailTarget } from '#shared/data/emails';
import { journalStep, stepRecorded, type Hold } from '#shared/data/idempotency';
import { newNumericIds } from '#shared/data/numeric-ids';
import { currentOutboxes, outboxPut, type OutboxItem } from '#shared/data/outbox';

/*
 * Adding emails to a collection: the batch stored in chunk transactions,
 * and an idempotent request's retry resuming the chunks its earlier
 * attempts committed.
 */

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
  // Beside a list's address guards, a chunk's transaction holds the outbox and a credit debit, and a journaled one its step.
  const perChunk = TRANSACTION_MAX_ITEMS - (hold ? 3 : 2);
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
    // One not found again is answered as its chunk stored it.
    const stored = outboxEmails(j.outbox);
    return {
      emails: j.outbox.email_ids.map((id, i) => found.get(id) ?? stored![i]!),
      positions: j.positions,
      duplicates: j.duplicates,
      outbox: outbox ?? j.outbox,
      resumed: true,
      settled: !outbox?.deltas,
    };
  });
}

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
    const emails = slots.map((s) =>
      pendingEmail({
        id: s.id,
        accountId,
        address: s.address,
        listId: inList ? target.listId : null,
        seq: s.seq,
        createdAt: Math.floor(now / 1000),
        awaiting,
      }),
    );
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
