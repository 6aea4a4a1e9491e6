import * as v from 'valibot';

/**
 * The one place that parses a stored item against its schema. Each data
 * module defines its items' schemas with valibot, at module level: building
 * one makes a few plain objects, cheap enough to do at import. Each is built
 * in a `@__PURE__` call all the same, as esbuild does not carry valibot's own
 * side-effect-free marks across modules: so a function's bundle keeps (and
 * builds) only the schemas of the items it reads (docs/performance.md,
 * "Cold start").
 *
 * Attributes a schema does not name (keys, index entries, `type`) are left
 * out; an optional one that is absent stays absent. An item that does not
 * match its schema is a bug, not a client's mistake: this throws (the
 * request answers 500) rather than return a value of the wrong shape, and
 * the message names the attribute at fault and what it should hold, not
 * what it holds.
 */
export function parseItem<S extends v.GenericSchema>(schema: S, item: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, item);
  if (result.success) return result.output;
  const [issue] = result.issues;
  // Says where and what was expected, never the stored value (an address, a message), which would reach the logs:
  // a check of our own (v.custom) says it in its message.
  const wanted = issue.expected && issue.expected !== 'unknown' ? `expected ${issue.expected}` : issue.message;
  throw new Error(`stored item does not match its schema at ${v.getDotPath(issue) ?? 'its root'}: ${wanted}`);
}
