import { query } from '#shared/db/items';
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

function queryPartition(q: IndexPageQuery, partition: string, wanted: number) {
  const backwards = q.endingBefore !== undefined;
  const cursor = q.endingBefore ?? q.startingAfter;
  return query(
    { index: q.index, partition, ...(cursor === undefined ? {} : { sort: [backwards ? '>' : '<', cursor] }), forward: backwards },
    wanted,
  );
}

/**
 * The same newest-first cursor paging over items of the table itself whose
 * sort key is `prefix` then a time-sortable id (the cursor). BETWEEN bounds
 * are inclusive, so the cursor's own item is read and dropped.
 */
export async function queryTablePage(q: CursorPageRequest & { partition: string; prefix: string }): Promise<Page<Record<string, unknown>>> {
  const backwards = q.endingBefore !== undefined;
  const cursor = q.endingBefore ?? q.startingAfter;
  const sort: NonNullable<Parameters<typeof query>[0]['sort']> =
    cursor === undefined
      ? ['begins_with', q.prefix]
      : backwards
        ? ['between', `${q.prefix}${cursor}`, `${q.prefix}\uffff`]
        : ['between', q.prefix, `${q.prefix}${cursor}`];
  const read = await query({ partition: q.partition, sort, forward: backwards }, q.limit + 2);
  const items = cursor === undefined ? read : read.filter((item) => item.sk !== `${q.prefix}${cursor}`);
  const hasMore = items.length > q.limit;
  const page = items.slice(0, q.limit);
  return { items: backwards ? page.reverse() : page, hasMore };
}
