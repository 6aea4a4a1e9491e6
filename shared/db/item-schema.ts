import type * as z from 'zod/mini';

/**
 * An item schema built on its first parse rather than at import. Building a
 * zod schema is work (every field is an object with its own checks), and a
 * function reads only some of the item types whose modules it imports: the
 * authorizer never parses a message, a read never an idempotency record.
 * Built at import, every schema of every imported module cost every cold
 * start (docs/performance.md, "Cold start").
 */
export function itemSchema<S extends z.ZodMiniType>(build: () => S): { parse(item: unknown): z.output<S> } {
  let schema: S | undefined;
  return { parse: (item) => (schema ??= build()).parse(item) };
}
