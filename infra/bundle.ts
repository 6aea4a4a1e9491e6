import path from 'node:path';
import { AssetHashType, DockerImage, type ILocalBundling } from 'aws-cdk-lib';
import { Code } from 'aws-cdk-lib/aws-lambda';
import { buildSync, type BuildOptions } from 'esbuild';
import { ESBUILD_TARGET } from './runtime.ts';

/**
 * How every function is bundled; `npm run bench` builds its floor bundle (the
 * SDK clients alone) with exactly these options, so the two compare like for
 * like.
 *
 * Code splitting is the point of bundling here rather than through
 * NodejsFunction (whose esbuild call writes one file): a dynamic `import()`
 * becomes a chunk of its own, which Node reads and compiles only when that
 * import runs. Code most requests never reach (the form parser, IDNA tables)
 * and data the first validation needs (domain lists, the Public Suffix List)
 * then cost nothing at init (docs/performance.md).
 */
export const BUNDLING = {
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: ESBUILD_TARGET,
  minify: true,
  // Maps ship next to each file but are not loaded at init (no --enable-source-maps): docs/performance.md.
  sourcemap: true,
  mainFields: ['module', 'main'],
  outExtension: { '.js': '.mjs' },
  chunkNames: 'chunks/[name]-[hash]',
  // CJS dependencies inside an ESM bundle still call require().
  banner: { js: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);" },
  // The SDK versions the code was tested with ship in the bundle, not whatever the runtime has.
  external: [],
  logLevel: 'error',
} satisfies BuildOptions;

/** Bundles one function's entry into `outdir` as `index.mjs` plus its lazily loaded chunks. */
export function bundle(entry: string, outdir: string): void {
  buildSync({ ...BUNDLING, entryPoints: { index: entry }, outdir });
}

/**
 * Bundling on this machine with esbuild's API. The entry is a field, so the
 * asset cache (keyed on the bundling options) tells functions apart.
 */
class LocalBundle implements ILocalBundling {
  constructor(readonly entry: string) {}

  tryBundle(outputDir: string): boolean {
    bundle(this.entry, outputDir);
    return true;
  }
}

/** A function's code: its entry bundled at synth, the asset named by a hash of the output. */
export function bundledCode(entry: string): Code {
  return Code.fromAsset(path.dirname(entry), {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      local: new LocalBundle(entry),
      // Required by the API, never pulled: local bundling always succeeds or throws.
      image: DockerImage.fromRegistry('local-bundling-only'),
    },
  });
}
