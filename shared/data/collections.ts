import { randomUUID } from 'node:crypto';
import { txUpdate, type TransactItems } from '#shared/db/batch';
import { attr, condition, update, type Update } from '#shared/db/expression';
import { conditionHeld, deleteItem, getItem, query, unlessConditionFails, updateItem, type Key } from '#shared/db/items';
import { keys } from '#shared/db/keys';
import { retryOnConflict } from '#shared/db/retry';

/**
 * Page-number pagination at constant cost, with items of bounded size.
 *
 * A collection (an account's standalone emails, its lists, or one list's
 * emails) hands each joining member a sequence number from one atomic
 * `ADD next_seq` (never a retry on contention; the lists collection's own
 * reservation is in data/email-lists.ts), and indexes it under that
 * number in gsi1. Live members are counted on two levels:
 *   - the collection item: `k_<B>` per block of BLOCK sequence numbers;
 *   - one block item per block: `b_<i>` per bucket of BUCKET numbers.
 * Counts that reach zero are removed (`compact`), so the collection item
 * grows with the live members (about 14 bytes per 10,000), never with its
 * history, and a block item holds at most 100 counters.
 *
 * Page k: sum the block counts to find the block holding member
 * (k-1)*PAGE_SIZE+1; unless the page starts within the block's first
 * bucket-width of members, read the block item to find the bucket; then one
 * Query from there, skipping fewer than BUCKET live members.
 */
export const PAGE_SIZE = 100;
export const BUCKET = 100;
export const BUCKETS_PER_BLOCK = 100;
export const BLOCK = BUCKET * BUCKETS_PER_BLOCK;

export type { Key } from '#shared/db/items';

/** Tokens of deltas applied but whose record may still exist; older ones are certainly settled. */
const TOKEN_TTL_MS = 60 * 60_000;

export interface Collection {
  key: Key;
  nextSeq: number;
  memberCount: number;
  blocks: Map<number, number>;
  item: Record<string, unknown> | undefined;
}

export async function readCollection(key: Key): Promise<Collection> {
  return collectionOf(key, await getItem(key, true));
}

const countsOf = (item: Record<string, unknown> | undefined, prefix: string) => {
  const counts = new Map<number, number>();
  for (const [name, value] of Object.entries(item ?? {})) {
    if (name.startsWith(prefix) && /^\d+$/.test(name.slice(prefix.length))) counts.set(Number(name.slice(prefix.length)), Number(value));
  }
  return [...counts.entries()].sort(([a], [b]) => a - b);
};

export function collectionOf(key: Key, item: Record<string, unknown> | undefined): Collection {
  return {
    key,
    item,
    blocks: new Map(countsOf(item, 'k_')),
    nextSeq: Number(item?.next_seq ?? 0),
    memberCount: Math.max(0, Number(item?.member_count ?? 0)),
  };
}

/**
 * Reserves `count` consecutive sequence numbers with one atomic ADD and
 * returns the first; undefined when `mustExist` and the item is gone (a
 * deleted list). Numbers a caller ends up not using are gaps, which cost nothing.
 */
export async function reserveSeqs(key: Key, count: number, mustExist: boolean): Promise<number | undefined> {
  const reserve = update().add`next_seq ${count}`;
  if (mustExist) reserve.when`attribute_exists(pk)`;
  // A collection item can also be written by a transaction (an email's deletion counts it in one): meeting one is retried.
  const out = await retryOnConflict(() => unlessConditionFails(updateItem(key, reserve, 'UPDATED_NEW')));
  return out ? Number(out.next_seq) - count : undefined;
}

/** What joining (or leaving) members change: counts per bucket, plus counters on the collection item. */
export interface Deltas {
  members: number;
  /** Bucket number (seq / BUCKET) → change. */
  buckets: Record<string, number>;
  counters: Record<string, number>;
  /** Attributes set only when absent (the start of a list's round of work). */
  ifAbsent?: Record<string, number>;
}

export function membershipDeltas(seqs: number[], sign: 1 | -1, counters: Record<string, number> = {}): Deltas {
  const buckets: Record<string, number> = {};
  for (const seq of seqs) {
    const bucket = Math.floor(seq / BUCKET);
    buckets[bucket] = (buckets[bucket] ?? 0) + sign;
  }
  return { members: sign * seqs.length, buckets, counters };
}

const blockOf = (bucket: number) => Math.floor(bucket / BUCKETS_PER_BLOCK);

/** Per block: bucket-within-block → change. */
function byBlock(buckets: Record<string, number>): Map<number, Map<number, number>> {
  const blocks = new Map<number, Map<number, number>>();
  for (const [bucket, change] of Object.entries(buckets)) {
    const b = Number(bucket);
    const inBlock = blocks.get(blockOf(b)) ?? new Map<number, number>();
    inBlock.set(b % BUCKETS_PER_BLOCK, (inBlock.get(b % BUCKETS_PER_BLOCK) ?? 0) + change);
    blocks.set(blockOf(b), inBlock);
  }
  return blocks;
}

/** An `ADD` of named numeric changes (zeros left out), applied once per token when tokens are given. */
function addUpdate(changes: [string, number][], tokens: string[] = []): Update {
  const write = update();
  for (const [attribute, n] of changes) if (n !== 0) write.add`${attr(attribute)} ${n}`;
  if (tokens.length) {
    write.add`applied ${new Set(tokens)}`;
    for (const token of tokens) write.when`NOT contains(applied, ${token})`;
  }
  return write;
}

const rootChanges = (deltas: Deltas): [string, number][] => {
  const blocks = new Map<number, number>();
  for (const [bucket, change] of Object.entries(deltas.buckets)) {
    blocks.set(blockOf(Number(bucket)), (blocks.get(blockOf(Number(bucket))) ?? 0) + change);
  }
  return [
    ['member_count', deltas.members],
    ...[...blocks].map(([b, n]): [string, number] => [`k_${b}`, n]),
    ...Object.entries(deltas.counters),
  ];
};

const blockKey = (collection: string, block: number) => keys.block.key({ collection, block });

/** A block item's counts, and its index entry (written by every update, so the item is always findable). */
function blockUpdate(collection: string, block: number, buckets: Map<number, number>, tokens?: string[]): Update {
  const write = addUpdate(
    [['n', [...buckets.values()].reduce((a, b) => a + b, 0)], ...[...buckets].map(([i, n]): [string, number] => [`b_${i}`, n])],
    tokens,
  );
  const { gsi1pk, gsi1sk } = keys.blocks.entry({ collection, block });
  return write.set`gsi1pk = ${gsi1pk}, gsi1sk = ${gsi1sk}`;
}

/**
 * Transaction parts that apply `deltas` atomically with other writes (a
 * delete, or the outbox that carried them dropping them): the collection
 * item and each block item touched. With a `token`, as `applyDeltas` marks
 * it (a plain apply of the same record then changes nothing).
 */
export function deltaUpdates(key: Key, deltas: Deltas, mustExist = false, token?: string): TransactItems {
  const tokens = token === undefined ? [] : [token];
  const root = addUpdate(rootChanges(deltas), tokens);
  for (const [attribute, value] of Object.entries(deltas.ifAbsent ?? {}))
    root.set`${attr(attribute)} = if_not_exists(${attr(attribute)}, ${value})`;
  if (mustExist) root.when`attribute_exists(pk)`;
  return [
    txUpdate(key, root),
    ...[...byBlock(deltas.buckets)].map(([block, buckets]) =>
      txUpdate(blockKey(key.pk, block), blockUpdate(key.pk, block, buckets, tokens)),
    ),
  ];
}

/** A fresh token for one record of deltas; its time lets stale ones be pruned. */
export const newDeltaToken = () => `${Date.now()}.${randomUUID().slice(0, 8)}`;

export interface PendingDeltas {
  token: string;
  deltas: Deltas;
}

/**
 * Applies recorded deltas exactly once without a transaction (so a busy
 * collection item never makes concurrent writers conflict): each `ADD` also
 * adds the record's token to the item's `applied` set, on the condition that
 * the token is not there yet. A repeat (a crash and a sweeper retry) changes
 * nothing. Returns the collection item after the update, or 'gone' when
 * `mustExist` and it no longer exists.
 */
export async function applyDeltas(key: Key, pending: PendingDeltas[], mustExist: boolean): Promise<Record<string, unknown> | 'gone'> {
  if (pending.length === 0) return (await readCollection(key)).item ?? 'gone';
  // Within a request the block items go alongside: a list deleted meanwhile is still being purged, and the
  // purge finds a block item through its index entry. Later (a recovery), only once the collection is known to exist.
  const fresh = pending.every((p) => Number(p.token.split('.')[0]) > Date.now() - 10_000);
  if (fresh) return (await Promise.all([applyToRoot(key, pending, mustExist), applyToBlocks(key, pending)]))[0];
  const root = await applyToRoot(key, pending, mustExist);
  if (root !== 'gone') await applyToBlocks(key, pending);
  return root;
}

async function applyToRoot(key: Key, pending: PendingDeltas[], mustExist: boolean): Promise<Record<string, unknown> | 'gone'> {
  const merged: Deltas = { members: 0, buckets: {}, counters: {}, ifAbsent: {} };
  for (const { deltas } of pending) {
    merged.members += deltas.members;
    for (const [b, n] of Object.entries(deltas.buckets)) merged.buckets[b] = (merged.buckets[b] ?? 0) + n;
    for (const [c, n] of Object.entries(deltas.counters)) merged.counters[c] = (merged.counters[c] ?? 0) + n;
    for (const [a, v] of Object.entries(deltas.ifAbsent ?? {})) merged.ifAbsent![a] = Math.min(merged.ifAbsent![a] ?? v, v);
  }
  const write = addUpdate(
    rootChanges(merged),
    pending.map((p) => p.token),
  );
  for (const [attribute, value] of Object.entries(merged.ifAbsent!))
    write.set`${attr(attribute)} = if_not_exists(${attr(attribute)}, ${value})`;
  if (mustExist) write.when`attribute_exists(pk)`;
  const out = await unlessConditionFails(updateItem(key, write, 'ALL_NEW'));
  if (out) return out;
  const current = (await readCollection(key)).item;
  if (!current) return 'gone';
  // Some were applied already (a retry after a crash): apply the rest.
  const applied = (current.applied as Set<string> | undefined) ?? new Set<string>();
  const rest = pending.filter((p) => !applied.has(p.token));
  if (rest.length === pending.length) throw new Error('counts refused although none of their tokens was applied');
  return rest.length ? applyToRoot(key, rest, mustExist) : current;
}

/** One update per block for all records together; if any was applied already, each on its own. */
async function applyToBlocks(key: Key, pending: PendingDeltas[]): Promise<void> {
  const blocks = new Map<number, { tokens: string[]; buckets: Map<number, number> }>();
  for (const { token, deltas } of pending) {
    for (const [block, buckets] of byBlock(deltas.buckets)) {
      const merged = blocks.get(block) ?? { tokens: [], buckets: new Map<number, number>() };
      merged.tokens.push(token);
      for (const [bucket, n] of buckets) merged.buckets.set(bucket, (merged.buckets.get(bucket) ?? 0) + n);
      blocks.set(block, merged);
    }
  }
  const apply = (block: number, buckets: Map<number, number>, tokens: string[]) =>
    conditionHeld(updateItem(blockKey(key.pk, block), blockUpdate(key.pk, block, buckets, tokens)));
  await Promise.all(
    [...blocks].map(async ([block, merged]) => {
      if ((await apply(block, merged.buckets, merged.tokens)) || merged.tokens.length === 1) return;
      for (const { token, deltas } of pending) {
        const own = byBlock(deltas.buckets).get(block);
        if (own) await apply(block, own, [token]); // a failed condition: applied by an earlier try
      }
    }),
  );
}

/**
 * Once the records are deleted their tokens can go. Tokens a crash left
 * behind are pruned here too once they are older than any record could be.
 */
export async function releaseTokens(key: Key, pending: PendingDeltas[], root?: Record<string, unknown>): Promise<void> {
  if (pending.length === 0) return;
  const stale = [...((root?.applied as Set<string> | undefined) ?? [])].filter((t) => Number(t.split('.')[0]) < Date.now() - TOKEN_TTL_MS);
  // Never re-create an item deleted meanwhile (a deleted list, an emptied block).
  const remove = (itemKey: Key, tokens: string[]) =>
    conditionHeld(updateItem(itemKey, update().delete`applied ${new Set(tokens)}`.when`attribute_exists(pk)`));
  const touched = pending.flatMap(({ token, deltas }) => [...byBlock(deltas.buckets).keys()].map((block) => ({ block, token })));
  const tokensOf = (held: { token: string }[]) => held.map((t) => t.token);
  await Promise.all([
    remove(key, [...pending.map((p) => p.token), ...stale]),
    ...[...Map.groupBy(touched, (t) => t.block)].map(([block, held]) => remove(blockKey(key.pk, block), tokensOf(held))),
  ]);
}

/**
 * After a member left: drops the block's count from the collection item and
 * the block item itself once they reach zero, so neither grows with history.
 * A later join re-creates them (`ADD` starts from zero).
 */
export async function compact(key: Key, seq: number): Promise<void> {
  const block = Math.floor(seq / BLOCK);
  const count = attr(`k_${block}`);
  await Promise.all([
    conditionHeld(updateItem(key, update().remove`${count}`.when`${count} = ${0}`)),
    // A block still holding a token may yet be retried against: keep it until released.
    conditionHeld(deleteItem(blockKey(key.pk, block), condition`n = ${0} AND attribute_not_exists(applied)`)),
  ]);
}

export interface PagePosition {
  page: number;
  totalPages: number;
  total: number;
  startSeq: number;
  skip: number;
}

export const totalPages = (total: number) => Math.max(1, Math.ceil(total / PAGE_SIZE));

/** Where page `page` starts; undefined when the page is out of range. */
export async function locatePage(collection: Collection, page: number): Promise<PagePosition | undefined> {
  const total = collection.memberCount;
  const pages = totalPages(total);
  if (page < 1 || page > pages) return undefined;
  const at = (startSeq: number, skip: number) => ({ page, totalPages: pages, total, startSeq, skip });
  let remaining = (page - 1) * PAGE_SIZE;
  for (const [block, count] of collection.blocks) {
    if (count <= 0) continue;
    if (remaining >= count) {
      remaining -= count;
      continue;
    }
    // Within the first BUCKET live members of the block the Query can skip them itself.
    if (remaining < BUCKET) return at(block * BLOCK, remaining);
    const item = await getItem(blockKey(collection.key.pk, block), true);
    let last: [number, number] = [0, 0];
    for (const [bucket, inBucket] of countsOf(item, 'b_')) {
      if (inBucket <= 0) continue;
      if (remaining < inBucket) return at(block * BLOCK + bucket * BUCKET, remaining);
      remaining -= inBucket;
      last = [bucket, inBucket];
    }
    // Counts still settling (a join applied to the collection item, not yet to the block): start at the last bucket.
    return at(block * BLOCK + last[0] * BUCKET, Math.min(remaining + last[1], BUCKET - 1));
  }
  return at(collection.nextSeq, 0);
}

/** One Query: the page's members in sequence order. */
export async function readPage(collectionPk: string, position: PagePosition): Promise<Record<string, unknown>[]> {
  const members = keys.members;
  const wanted = position.skip + PAGE_SIZE;
  const items = await query(
    {
      index: members.index,
      partition: members.partition({ collection: collectionPk }),
      sort: ['>=', members.sortKey({ seq: position.startSeq })],
    },
    wanted,
    10,
  );
  return items.slice(position.skip, wanted);
}
