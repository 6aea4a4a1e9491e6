/**
 * Runs `run` over `items`, at most `limit` at a time: each of `limit`
 * workers takes the next item as soon as it finishes one, so one slow item
 * holds one worker, not the rest. Resolves when all are done; the first
 * rejection rejects it (the others still finish).
 */
export async function inParallel<T>(items: readonly T[], limit: number, run: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      for (let i = next++; i < items.length; i = next++) await run(items[i]!, i);
    }),
  );
}
