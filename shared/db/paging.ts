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
  partition: string;
  filter?: Pick<QueryCommandInput, 'FilterExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'>;
}

/**
 * Newest-first cursor paging over a GSI whose sort key is a time-sortable id.
 * The cursor is the id itself, so pages stay correct while items are added:
 * new items sort before every existing cursor and never shift a page.
 */
export async function queryIndexPage(q: IndexPageQuery): Promise<Page<Record<string, unknown>>> {
  const backwards = q.endingBefore !== undefined;
  const cursor = q.endingBefore ?? q.startingAfter;
  const pk = `${q.index}pk`;
  const sk = `${q.index}sk`;
  const names: Record<string, string> = { '#pk': pk, ...(q.filter?.ExpressionAttributeNames ?? {}) };
  const values: Record<string, unknown> = { ':pk': q.partition, ...(q.filter?.ExpressionAttributeValues ?? {}) };
  let condition = '#pk = :pk';
  if (cursor !== undefined) {
    names['#sk'] = sk;
    values[':cursor'] = cursor;
    condition += backwards ? ' AND #sk > :cursor' : ' AND #sk < :cursor';
  }

  const wanted = q.limit + 1;
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  // A filter is applied after DynamoDB's Limit, so keep reading until a full page (or the end).
  do {
    const out = await db().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: q.index,
        KeyConditionExpression: condition,
        FilterExpression: q.filter?.FilterExpression,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ScanIndexForward: backwards,
        Limit: q.filter ? Math.max(wanted, 100) : wanted - items.length,
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(...(out.Items ?? []));
    startKey = out.LastEvaluatedKey;
  } while (startKey && items.length < wanted);

  const hasMore = items.length > q.limit;
  const page = items.slice(0, q.limit);
  return { items: backwards ? page.reverse() : page, hasMore };
}
