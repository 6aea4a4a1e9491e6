/**
 * Bundled in place of `node:stream/web` (infra/bundle.ts): what @middy/core 6
 * imports from it, without loading it.
 *
 * middy reads ReadableStream only in `instanceof` checks of its response
 * streaming mode, which no function here uses; the import alone made Node load
 * eight internal modules at every cold start (2 to 3% of the floor's import
 * time, docs/performance.md). This class answers `instanceof` as the real one
 * does, loading it on first use. middy 7 drops the import but requires Node 22,
 * and development still runs on Node 20.
 */
export class ReadableStream {
  // Only instanceof is needed; anything else would be a use this stand-in cannot serve, so it fails loudly.
  constructor() {
    throw new Error('node:stream/web is not bundled (infra/bundle.ts): middy response streaming is not supported');
  }

  static [Symbol.hasInstance](value: unknown): boolean {
    return value instanceof globalThis.ReadableStream;
  }
}
