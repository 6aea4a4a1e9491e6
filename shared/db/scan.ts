import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#shared/db/client';
import type { Condition } from '#shared/db/expression';
import type { Item } from '#shared/db/items';

/**
 * The items of the whole table that `filter` keeps, a page at a time (a
 * page may be empty: the filter applies after the read). For the admin
 * command line's migrations: no request reads the whole table, and apart
 * from items.ts no function bundle can carry it.
 */
export async function* scanPages(filter: Condition): AsyncGenerator<Item[]> {
  const { ConditionExpression, ...placeholders } = filter.input();
  let start: Item | undefined;
  do {
    const page = await db().send(
      new ScanCommand({ TableName: tableName(), FilterExpression: ConditionExpression, ...placeholders, ExclusiveStartKey: start }),
    );
    yield page.Items ?? [];
    start = page.LastEvaluatedKey;
  } while (start);
}
