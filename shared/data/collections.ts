import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#shared/db/client';
import { emailKeys, pad } from '#shared/db/keys';

/**
 * Page-number pagination that costs the same for page 1 and page 10,000.
 *
 * A collection (an account's standalone emails, its lists, or one list's
 * emails) hands each member a dense sequence number when it joins and keeps,
 * on its own item, a live count per bucket of BUCKET sequence numbers
 * (attributes b_0, b_1, ...). A delete leaves a gap in the sequence and
 * decrements its bucket. To read page k: one GetItem for the counts, sum them
 * to find the bucket holding item (k-1)*PAGE_SIZE+1, then one Query from that
 * bucket's first sequence number, skipping fewer than BUCKET members.
 */
export const PAGE_SIZE = 100;
export const BUCKET = 100;

export type Key = { pk: string; sk: string };

export interface Collection {
  key: Key;
  nextSeq: number;
  lastId: number;
  memberCount: number;
  buckets: Map<number, number>;
  item: Record<string, unknown> | undefined;
}

export async function readCollection(key: Key): Promise<Collection> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }));
  return collectionOf(key, out.Item);
}

export function collectionOf(key: Key, item: Record<string, unknown> | undefined): Collection {
  const buckets = new Map<number, number>();
  for (const [name, value] of Object.entries(item ?? {})) {
    if (/^b_\d+$/.test(name)) buckets.set(Number(name.slice(2)), Number(value));
  }
  return {
    key,
    item,
    buckets,
    nextSeq: Number(item?.next_seq ?? 0),
    lastId: Number(item?.last_id ?? 0),
    memberCount: Number(item?.member_count ?? 0),
  };
}

export interface UpdateParts {
  set: string[];
  add: string[];
  names: Record<string, string>;
  values: Record<string, unknown>;
  conditions: string[];
}

export const emptyUpdate = (): UpdateParts => ({ set: [], add: [], names: {}, values: {}, conditions: [] });

/** Builds the transaction Update item for a collection from its parts. */
export function collectionUpdate(key: Key, parts: UpdateParts) {
  const clauses = [
    parts.set.length ? `SET ${parts.set.join(', ')}` : '',
    parts.add.length ? `ADD ${parts.add.join(', ')}` : '',
  ].filter(Boolean);
  return {
    TableName: tableName(),
    Key: key,
    UpdateExpression: clauses.join(' '),
    ...(parts.conditions.length ? { ConditionExpression: parts.conditions.join(' AND ') } : {}),
    ...(Object.keys(parts.names).length ? { ExpressionAttributeNames: parts.names } : {}),
    ...(Object.keys(parts.values).length ? { ExpressionAttributeValues: parts.values } : {}),
  };
}

/**
 * Appends `ids` (ascending, all above the collection's last id) as new
 * members. The condition on next_seq makes concurrent appends serialize:
 * the loser re-reads and retries, so sequence numbers stay dense and in id order.
 */
export function appendMembers(collection: Collection, ids: number[], parts: UpdateParts, mustExist: boolean) {
  const seqs = ids.map((_, i) => collection.nextSeq + i);
  parts.values[':expected_seq'] = collection.nextSeq;
  parts.values[':next_seq'] = collection.nextSeq + ids.length;
  parts.values[':last_id'] = ids.at(-1);
  parts.values[':added'] = ids.length;
  parts.set.push('next_seq = :next_seq', 'last_id = :last_id');
  parts.add.push('member_count :added');
  parts.conditions.push(
    mustExist ? 'next_seq = :expected_seq' : '(attribute_not_exists(next_seq) OR next_seq = :expected_seq)',
  );
  const perBucket = new Map<number, number>();
  for (const seq of seqs) perBucket.set(Math.floor(seq / BUCKET), (perBucket.get(Math.floor(seq / BUCKET)) ?? 0) + 1);
  for (const [bucket, count] of perBucket) {
    parts.add.push(`b_${bucket} :b_${bucket}`);
    parts.values[`:b_${bucket}`] = count;
  }
  return seqs;
}

/** Removes one member: its bucket and the total shrink, the sequence keeps its gap. */
export function removeMember(seq: number, parts: UpdateParts) {
  const bucket = Math.floor(seq / BUCKET);
  parts.add.push('member_count :minus_one', `b_${bucket} :minus_one`);
  parts.values[':minus_one'] = -1;
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
export function locatePage(collection: Collection, page: number): PagePosition | undefined {
  const total = collection.memberCount;
  const pages = totalPages(total);
  if (page < 1 || page > pages) return undefined;
  let remaining = (page - 1) * PAGE_SIZE;
  const ordered = [...collection.buckets.entries()].sort(([a], [b]) => a - b);
  for (const [bucket, count] of ordered) {
    if (remaining < count) return { page, totalPages: pages, total, startSeq: bucket * BUCKET, skip: remaining };
    remaining -= count;
  }
  return { page, totalPages: pages, total, startSeq: collection.nextSeq, skip: 0 };
}

/** One Query: the page's members in sequence order. */
export async function readPage(collectionPk: string, position: PagePosition): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  const wanted = position.skip + PAGE_SIZE;
  do {
    const out = await db().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk >= :from',
        ExpressionAttributeValues: { ':pk': emailKeys.membersPartition(collectionPk), ':from': pad(position.startSeq) },
        Limit: wanted - items.length,
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(...(out.Items ?? []));
    startKey = out.LastEvaluatedKey;
  } while (startKey && items.length < wanted);
  return items.slice(position.skip, wanted);
}
