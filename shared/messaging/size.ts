/**
 * The stored-size bound of a message, and of a page of them. A page must
 * fit in one Lambda response (6 MB), where the JSON body travels as a JSON
 * string, so sizes are counted in that form: a `"` costs 4 bytes there, a
 * control character 7.
 *
 * The text is bounded by its schema (4,096 characters: at most 28 KiB so
 * counted). Reactions and attachments share EXTRAS budget, kept as a running
 * total on the message (`extras_bytes`) that every write adjusts atomically:
 * room for a reaction by each of a 1,000-member group (1,000 contact ids
 * take 34 KiB) or 10 attachments with the longest URLs and names, while a
 * message stays well inside a WebSocket frame (128 KB) with its download
 * URLs. A page holds as many messages as fit in MAX_PAGE_BYTES.
 */
export const MAX_EXTRAS_BYTES = 64 * 1024;

/** What a page's items may take, so counted: the rest of a response (its envelope, `has_more`) is small. */
export const MAX_PAGE_BYTES = 5_000_000;

/** Bytes a JSON value takes inside the Lambda response (without the enclosing quotes). */
export const encodedBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(JSON.stringify(value))) - 2;

/** One element of a JSON array or object: the value and its comma. */
export const elementBytes = (value: unknown) => encodedBytes(value) + 1;

/**
 * The part of a page that fits in one response: its items from the
 * cursor's side (the front; the back of a page read with `ending_before`,
 * whose items nearest the cursor come last) while they take at most
 * MAX_PAGE_BYTES, and at least one. A page cut short has more after it, and
 * the client's next cursor (its last item, or its first going back) goes on
 * from where it was cut.
 */
export function fittedPage<T>(items: T[], hasMore: boolean, fromBack = false): { items: T[]; hasMore: boolean } {
  let bytes = 0;
  let count = 0;
  for (let i = 0; i < items.length; i++) {
    bytes += elementBytes(items[fromBack ? items.length - 1 - i : i]);
    if (count > 0 && bytes > MAX_PAGE_BYTES) break;
    count++;
  }
  if (count === items.length) return { items, hasMore };
  return { items: fromBack ? items.slice(items.length - count) : items.slice(0, count), hasMore: true };
}
