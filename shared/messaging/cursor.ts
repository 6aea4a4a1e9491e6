import type { CursorPageRequest } from '#shared/db/paging';
import { invalid } from '#shared/errors';

export interface CursorQuery {
  limit?: number;
  starting_after?: string;
  ending_before?: string;
}

export const DEFAULT_LIMIT = 10;

export const invalidCursor = (query: CursorQuery) => {
  const param = query.starting_after !== undefined ? 'starting_after' : 'ending_before';
  return invalid(`${param} must be the id of an item in this list`, param, 'invalid_cursor');
};

/**
 * Checks the cursor parameters and, when `isInList` is given, that the
 * cursor id is an item of the list being paged, as docs/api-conventions.md (Pagination) wants a 400
 * otherwise. (A list whose read proves it by itself passes no `isInList`.)
 */
export async function cursorPage(query: CursorQuery, isInList?: (id: string) => Promise<boolean>): Promise<CursorPageRequest> {
  if (query.starting_after !== undefined && query.ending_before !== undefined) {
    throw invalid('Use either starting_after or ending_before, not both', 'ending_before');
  }
  const cursor = query.starting_after ?? query.ending_before;
  if (cursor !== undefined && isInList && !(await isInList(cursor))) throw invalidCursor(query);
  return {
    limit: query.limit ?? DEFAULT_LIMIT,
    ...(query.starting_after !== undefined ? { startingAfter: query.starting_after } : {}),
    ...(query.ending_before !== undefined ? { endingBefore: query.ending_before } : {}),
  };
}

/** A newest-first cursor page over a short list held whole (a webhook endpoint list: one Query). */
export function pageOf<T extends { id: string }>(newestFirst: T[], query: CursorQuery): { items: T[]; hasMore: boolean } {
  if (query.starting_after !== undefined && query.ending_before !== undefined) {
    throw invalid('Use either starting_after or ending_before, not both', 'ending_before');
  }
  const cursor = query.starting_after ?? query.ending_before;
  const at = cursor === undefined ? -1 : newestFirst.findIndex((item) => item.id === cursor);
  if (cursor !== undefined && at < 0) throw invalidCursor(query);
  const limit = query.limit ?? DEFAULT_LIMIT;
  if (query.ending_before !== undefined) {
    const before = newestFirst.slice(0, at);
    return { items: before.slice(-limit), hasMore: before.length > limit };
  }
  const after = newestFirst.slice(at + 1);
  return { items: after.slice(0, limit), hasMore: after.length > limit };
}
