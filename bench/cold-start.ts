/**
 * Cold start of every function, as the import of the bundle `cdk synth`
 * writes, against the floor (bench/floor.ts: the SDK clients alone) built in
 * the same run with the stack's esbuild flags. Each sample is a fresh `node`
 * process with the NODE_OPTIONS the stack gives the function, floor and
 * function interleaved (order alternating), and the figure is the median of
 * the paired ratios of import CPU time: CPU rather than wall time because a
 * 256 MB Lambda is limited by its CPU share, and because this machine is shared.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundle } from '../infra/bundle.ts';
import { CloudAssembly } from '../scripts/local/cloud-assembly.ts';

export const COLD_START_TARGET = 1.15;
/** Paired fresh processes per function: one import varies by ±10% here, and a median of 9 moved by up to 0.2 between two runs. */
export const RUNS = Math.max(7, Number(process.env.BENCH_RUNS ?? 21));

export interface ColdStart {
  /** Logical ids (without the hash) of the functions sharing this bundle. */
  names: string[];
  /** What init reads: the entry file and the chunks it imports statically. */
  kib: number;
  /** Chunks only a dynamic import() loads, on first use. */
  lazyKib: number;
  ratio: number;
  iqr: [number, number];
}

export interface ColdStartReport {
  floorKib: number;
  functions: ColdStart[];
  /** The largest bundle's import with `--enable-source-maps` over without. */
  sourceMaps: { name: string; ratio: number; iqr: [number, number] };
}

/** CPU milliseconds (all threads) a fresh process spends importing the bundle. */
function importCpuMs(file: string, nodeOptions: string): number {
  const script = `const c=process.cpuUsage();await import(${JSON.stringify(file)});const d=process.cpuUsage(c);console.log((d.user+d.system)/1e3)`;
  const env = { ...process.env, NODE_OPTIONS: nodeOptions, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
  return Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { env }).toString());
}

/** The files a bundle's import reads: the entry and, transitively, the chunks it imports statically. */
function eagerFiles(entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    // Minified static imports: `import{a as b}from"./chunks/x.mjs"` or `import"./chunks/x.mjs"`; `import(` is dynamic.
    for (const [, spec] of readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*"(\.\.?\/[^"]+)"/g)) visit(join(dirname(file), spec!));
  };
  visit(entry);
  return seen;
}

const kibOf = (files: Iterable<string>) => [...files].reduce((n, f) => n + statSync(f).size, 0) / 1024;

function bundleKib(entry: string): { kib: number; lazyKib: number } {
  const eager = eagerFiles(entry);
  const chunksDir = join(dirname(entry), 'chunks');
  const chunks = statSync(chunksDir, { throwIfNoEntry: false })
    ? readdirSync(chunksDir)
        .filter((f) => f.endsWith('.mjs'))
        .map((f) => join(chunksDir, f))
    : [];
  return { kib: kibOf(eager), lazyKib: kibOf(chunks.filter((c) => !eager.has(c))) };
}

/** Median and interquartile range of b/a over paired fresh processes, the order alternating. */
function pairedRatio(a: () => number, b: () => number): { ratio: number; iqr: [number, number] } {
  const ratios: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    if (run % 2 === 0) {
      const x = a();
      ratios.push(b() / x);
    } else {
      const y = b();
      ratios.push(y / a());
    }
  }
  ratios.sort((p, q) => p - q);
  const at = (q: number) => ratios[Math.round((ratios.length - 1) * q)]!;
  return { ratio: at(0.5), iqr: [at(0.25), at(0.75)] };
}

/**
 * Where a bundle is imported from. Lambda runs every function from
 * /var/task; here each bundle, the floor's too, gets a directory whose path
 * has the same length. The length matters: in an asset directory named by
 * its 64-character hash, the same bundle imports in about 5% more CPU time
 * than in a short one (its module URLs are longer to resolve), which would
 * count against every function and not against the floor.
 */
const taskDir = (root: string, index: number) => join(root, 'task', String(index).padStart(3, '0'));

/** The floor, bundled by the same function as every Lambda. */
function buildFloor(dir: string): string {
  const outdir = taskDir(dir, 0);
  bundle(fileURLToPath(new URL('./floor.ts', import.meta.url)), outdir);
  return join(outdir, 'index.mjs');
}

/** A synthesized bundle copied beside the floor, at a path of the same length. */
function besideFloor(dir: string, index: number, file: string): string {
  const outdir = taskDir(dir, index);
  cpSync(dirname(file), outdir, { recursive: true });
  return join(outdir, basename(file));
}

export async function coldStarts(): Promise<ColdStartReport> {
  const out = mkdtempSync(join(tmpdir(), 'bench-synth-'));
  try {
    execFileSync('npx', ['cdk', 'synth', '--quiet', '--output', out], {
      stdio: 'ignore',
      env: { ...process.env, CDK_DISABLE_VERSION_CHECK: '1' },
    });
    const floor = buildFloor(out);
    const bundles = new Map<string, { names: string[]; file: string; nodeOptions: string }>();
    for (const fn of CloudAssembly.read(out).functions()) {
      const nodeOptions = typeof fn.environment.NODE_OPTIONS === 'string' ? fn.environment.NODE_OPTIONS : '';
      const key = `${fn.file}\0${nodeOptions}`;
      const name = fn.logicalId.replace(/[0-9A-F]{8}$/, '');
      const seen = bundles.get(key);
      if (seen) seen.names.push(name);
      else bundles.set(key, { names: [name], file: besideFloor(out, bundles.size + 1, fn.file), nodeOptions });
    }
    const sized = [...bundles.values()].map((b) => ({ ...b, ...bundleKib(b.file) }));
    const functions = sized.map(({ names, file, nodeOptions, kib, lazyKib }) => ({
      names,
      kib,
      lazyKib,
      ...pairedRatio(
        () => importCpuMs(floor, nodeOptions),
        () => importCpuMs(file, nodeOptions),
      ),
    }));
    const largest = sized.reduce((a, b) => (b.kib > a.kib ? b : a));
    const sourceMaps = {
      name: largest.names[0]!,
      ...pairedRatio(
        () => importCpuMs(largest.file, ''),
        () => importCpuMs(largest.file, '--enable-source-maps'),
      ),
    };
    return { floorKib: bundleKib(floor).kib, functions, sourceMaps };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
