import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#shared/db/client';
import type { IndexName } from '#shared/db/table-definition';

export interface CursorPageRequest {
  limit: number;
  /** Return items older than this sort key (next page in newest-first order). */
  startingAfter?: string;
  /** Return items newer than this sort key (previous page). */
  endingBefore?: string;
}

export interface Page<T> {
  items: T[];
  hasMore: boolean;
}

export interface IndexPageQuery extends CursorPageRequest {
  index: IndexName;
  /** One partition, or several whose union is the list (merged by sort key). */
  partitions: string[];
}

/**
 * Newest-first cursor paging over a GSI whose sort key is a time-sortable id.
 * The cursor is the id itself, so pages stay correct while items are added:
 * new items sort before every existing cursor and never shift a page.
 *
 * Each partition is read for at most one page plus one item, so a page costs
 * at most `partitions × (limit + 1)` items read, however long the list is.
 */
export async function queryIndexPage(q: IndexPageQuery): Promise<Page<Record<string, unknown>>> {
  const backwards = q.endingBefore !== undefined;
  const sk = `${q.index}sk`;
  const wanted = q.limit + 1;
  const read = await Promise.all(q.partitions.map((partition) => queryPartition(q, partition, wanted)));
  const merged = read.flat();
  if (read.length > 1) {
    merged.sort((a, b) => (String(a[sk]) < String(b[sk]) ? 1 : -1) * (backwards ? -1 : 1));
  }
  const hasMore = merged.length > q.limit;
  const page = merged.slice(0, q.limit);
  return { items: backwards ? page.reverse() : page, hasMore };
}

async function queryPartition(q: IndexPageQuery, partition: string, wanted: number) {
  const backwards = q.endingBefore !== undefined;
  const cursor = q.endingBefore ?? q.startingAfter;
  const names: Record<string, string> = { '#pk': `${q.index}pk` };
  const values: Record<string, unknown> = { ':pk': partition };
  let condition = '#pk = :pk';
  if (cursor !== undefined) {
    names['#sk'] = `${q.index}sk`;
    values[':cursor'] = cursor;
    condition += backwards ? ' AND #sk > :cursor' : ' AND #sk < :cursor';
  }
  return queryItems(
    {
      IndexName: q.index,
      KeyConditionExpression: condition,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ScanIndexForward: backwards,
    },
    wanted,
  );
}

/**
 * Up to `wanted` items of a Query, in its order. More than one call only
 * when the items pass DynamoDB's 1 MB per response. Reads of the table
 * itself (no IndexName) are strongly consistent.
 */
export async function queryItems(
  input: Omit<QueryCommandInput, 'TableName' | 'Limit' | 'ExclusiveStartKey'>,
  wanted: number,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const out = await db().send(
      new QueryCommand({
        TableName: tableName(),
        ConsistentRead: input.IndexName === undefined,
        ...input,
        Limit: wanted - items.length,
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(...(out.Items ?? []));
    startKey = out.LastEvaluatedKey;
  } while (startKey && items.length < wanted);
  return items;
}
