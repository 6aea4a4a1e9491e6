/**
 * A regular expression with Unicode property classes (`\p{L}`,
 * `\p{Extended_Pictographic}`), built at its first use.
 *
 * V8 parses every regex literal of a script when it loads it, even one inside
 * a function that never runs, and building a property class takes it most of
 * a millisecond. The few literals the validator and the reaction check had
 * cost every cold start about 2 ms, for input (non-ASCII text, emoji) most
 * requests never carry. The RegExp constructor parses its source only when it
 * is called (docs/performance.md).
 */
export function propertyPattern(source: string): { test(text: string): boolean } {
  let built: RegExp | undefined;
  return { test: (text) => (built ??= new RegExp(source, 'u')).test(text) };
}
