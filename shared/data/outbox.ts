import { randomUUID } from 'node:crypto';
import * as v from 'valibot';
import { parseItem } from '#shared/db/item-schema';
import { batchDelete, batchGet, batchPut, txPut, txUpdate, type TransactItem } from '#shared/db/batch';
import { update } from '#shared/db/expression';
import { conditionHeld, deleteItem, putItem, query, updateItem, type Key } from '#shared/db/items';
import { OUTBOX_SHARDS, keys, outboxShard } from '#shared/db/keys';
import { newDeltaToken, type Deltas } from '#shared/data/collections';

/**
 * The validation outbox's items and the index partitions that are its
 * states (`awaiting`, `ready`, `queued`). The life cycle that moves them,
 * and why the email write path has one, is in shared/email/outbox.ts.
 */
export interface OutboxItem {
  account_id: string;
  outbox_id: string;
  email_ids: number[];
  /** The emails' addresses and sequence numbers (same order), list and creation time: the worker gets them with the work. */
  addresses?: string[];
  seqs?: number[];
  list_id?: number | null;
  emails_created_at?: number;
  created_at_ms: number;
  awaiting: boolean;
  /** Counts for the collection, applied exactly once under `token`; absent once applied. */
  collection: Key;
  collection_must_exist: boolean;
  token: string;
  deltas?: Deltas;
}

export interface OutboxInput {
  emailIds: number[];
  addresses?: string[];
  seqs?: number[];
  listId?: number | null;
  emailsCreatedAt?: number;
  awaiting: boolean;
  collection: Key;
  mustExist: boolean;
  deltas: Deltas;
}

export function outboxPut(accountId: string, input: OutboxInput) {
  const now = Date.now();
  const item: OutboxItem = {
    account_id: accountId,
    outbox_id: randomUUID(),
    email_ids: input.emailIds,
    ...(input.addresses
      ? { addresses: input.addresses, seqs: input.seqs, list_id: input.listId ?? null, emails_created_at: input.emailsCreatedAt }
      : {}),
    created_at_ms: now,
    awaiting: input.awaiting,
    collection: input.collection,
    collection_must_exist: input.mustExist,
    token: newDeltaToken(),
    deltas: input.deltas,
  };
  const index = input.awaiting
    ? { ...keys.awaitingOutboxes.entry({ acct: accountId, ms: now }), ...keys.allAwaitingOutboxes.entry({ ms: now }) }
    : keys.readyOutboxes.entry({ shard: outboxShard(item.outbox_id), ms: now });
  return { item, put: txPut({ ...outboxKey(item), type: 'outbox', ...index, ...item }) as TransactItem };
}

const outboxKey = (item: Pick<OutboxItem, 'account_id' | 'outbox_id'>) => keys.outbox.key({ acct: item.account_id, uuid: item.outbox_id });

export async function deleteOutbox(item: OutboxItem): Promise<void> {
  await deleteItem(outboxKey(item));
}

/**
 * An outbox whose work is queued stays as the marker of that work: it moves
 * to the due index (its counts, applied, are dropped), and the recovery pass
 * looks at its emails once it comes due. So a lost message is found from
 * one item per chunk, not one index entry per email.
 */
export const DUE_AFTER_MS = 30 * 60_000;

export async function markQueued(items: OutboxItem[], dueMs = Date.now() + DUE_AFTER_MS): Promise<void> {
  const puts = items.map((item) => {
    const { deltas: _applied, ...kept } = item;
    return { ...outboxKey(item), type: 'outbox', ...keys.dueOutboxes.entry({ shard: outboxShard(item.outbox_id), ms: dueMs }), ...kept };
  });
  if (puts.length === 1) await putItem(puts[0]!);
  else if (puts.length) await batchPut(puts);
}

/** `queued` outboxes that came due before `beforeMs`: their emails should be finished by now. */
export async function queuedOutboxesDue(beforeMs: number, limit = 100): Promise<OutboxItem[]> {
  return queryShards(keys.dueOutboxes, beforeMs, limit);
}

export async function deleteOutboxes(items: OutboxItem[]): Promise<void> {
  if (items.length === 0) return;
  if (items.length === 1) return deleteOutbox(items[0]!);
  await batchDelete(items.map(outboxKey));
}

/** Transaction part: the outbox gives up its counts, on condition that it still carries them (they are applied once). */
export const deltasDropped = (item: OutboxItem): TransactItem =>
  txUpdate(outboxKey(item), update().remove`deltas`.when`attribute_exists(deltas)`);

/** A held outbox keeps its work but no longer its counts, once they are applied. */
export async function dropOutboxDeltas(item: OutboxItem): Promise<void> {
  await conditionHeld(updateItem(outboxKey(item), update().remove`deltas`.when`attribute_exists(pk)`));
}

// Built in a /* @__PURE__ */ call, so that esbuild drops it from functions that never read this item (shared/db/item-schema.ts).
const outboxItem = /* @__PURE__ */ (() =>
  v.object({
    account_id: v.string(),
    outbox_id: v.string(),
    email_ids: v.array(v.number()),
    addresses: v.optional(v.array(v.string())),
    seqs: v.optional(v.array(v.number())),
    list_id: v.optional(v.nullable(v.number())),
    emails_created_at: v.optional(v.number()),
    created_at_ms: v.number(),
    awaiting: v.boolean(),
    collection: v.object({ pk: v.string(), sk: v.string() }),
    collection_must_exist: v.boolean(),
    token: v.string(),
    // Written by this module only (outboxPut): its shape is the Deltas type's.
    deltas: v.optional(v.custom<Deltas>((value) => typeof value === 'object' && value !== null)),
  }))();

const toOutbox = (item: Record<string, unknown>): OutboxItem => parseItem(outboxItem, item);

type OutboxIndex = typeof keys.awaitingOutboxes | typeof keys.allAwaitingOutboxes | typeof keys.readyOutboxes | typeof keys.dueOutboxes;

async function queryIndex(index: OutboxIndex, partition: string, beforeMs: number, limit: number): Promise<OutboxItem[]> {
  const items = await query({ index: index.index, partition, sort: ['<', index.sortKey({ ms: beforeMs })] }, limit, 1);
  return items.map(toOutbox);
}

/** One query per shard of a sharded outbox index, in parallel. */
async function queryShards(index: typeof keys.readyOutboxes | typeof keys.dueOutboxes, beforeMs: number, limit: number) {
  const shards = Array.from({ length: OUTBOX_SHARDS }, (_, shard) => queryIndex(index, index.partition({ shard }), beforeMs, limit));
  return (await Promise.all(shards)).flat();
}

/** `ready` outboxes older than `olderThanMs`: they should have been queued by now (their request crashed or lost the queue). */
export async function readyOutboxes(olderThanMs: number, limit = 100): Promise<OutboxItem[]> {
  return queryShards(keys.readyOutboxes, Date.now() - olderThanMs, limit);
}

/** One account's work waiting for credits, oldest first. */
export const awaitingOutboxes = (accountId: string, limit = 100) =>
  queryIndex(keys.awaitingOutboxes, keys.awaitingOutboxes.partition({ acct: accountId }), Date.now() + 1, limit);

/** Every account's work waiting for credits (the sweeper retries them). */
export const allAwaitingOutboxes = (limit = 100) =>
  queryIndex(keys.allAwaitingOutboxes, keys.allAwaitingOutboxes.partition(), Date.now() + 1, limit);

/** The outboxes as stored now, by id (absent: deleted once settled). */
export async function currentOutboxes(items: OutboxItem[]): Promise<Map<string, OutboxItem>> {
  const found = await batchGet(items.map(outboxKey), true);
  return new Map(found.map(toOutbox).map((o) => [o.outbox_id, o]));
}

/** Transaction part: an `awaiting` outbox becomes `ready`. */
export const readyUpdate = (item: OutboxItem): TransactItem => {
  const ready = keys.readyOutboxes.entry({ shard: outboxShard(item.outbox_id), ms: item.created_at_ms });
  const release = update().set`gsi2pk = ${ready.gsi2pk}, gsi2sk = ${ready.gsi2sk}, awaiting = ${false}`.remove`gsi1pk, gsi1sk`
    .when`awaiting = ${true}`;
  return txUpdate(outboxKey(item), release);
};
