/**
 * Cold start of every function, as the import of the bundle `cdk synth`
 * writes, against the floor (bench/floor.ts: the SDK clients alone) built in
 * the same run with the stack's esbuild flags. Each sample is a fresh process
 * of the Lambda runtime's Node major with the NODE_OPTIONS the stack gives the
 * function, floor and function interleaved (order alternating), and the
 * figure is the median of the paired ratios of import CPU time: CPU rather
 * than wall time because a 256 MB Lambda is limited by its CPU share, and
 * because this machine is shared.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundle } from '../infra/bundle.ts';
import { CloudAssembly } from '../scripts/local/cloud-assembly.ts';
import { FIRST_REQUEST_FUNCTION, firstRequestSetup } from './first-request.ts';
import { PINNED, importCpuMs, runtimeNode, scriptCpuMs } from './import-cpu.ts';

export const COLD_START_TARGET = 1.15;
/** Paired fresh processes per function: one pair's ratio varies by ±4% here even pinned to a core, so a median needs many. */
export const RUNS = Math.max(7, Number(process.env.BENCH_RUNS ?? 31));

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
  /** The Node that imported the bundles: the runtime's major (.nvmrc). */
  nodeVersion: string;
  /** Whether each import ran on one core. */
  pinned: boolean;
  floorKib: number;
  functions: ColdStart[];
  /** The largest bundle's import with `--enable-source-maps` over without. */
  sourceMaps: { name: string; ratio: number; iqr: [number, number] };
  /** Import plus the first request (one table read) over the floor's import plus the same read (bench/first-request.ts). */
  firstRequest: { name: string; ratio: number; iqr: [number, number] };
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
 * Lambda imports every function from one path, /var/task. Here too every
 * bundle, the floor's included, is imported from one directory, each renamed
 * into place in turn: the same two bundles read ratios up to 0.10 apart
 * depending on the name of the directory they sat in (1.08 in /var/task and
 * in most short directories, up to 1.18 in a few longer ones, even with the
 * floor beside the function at a path of the same length), so a directory
 * per bundle would measure directory names too.
 */
class TaskDir {
  private readonly parent = mkdtempSync(tmpdir() + sep);
  /** Short, as Lambda's is; holds one bundle only while it is being imported. */
  readonly path = join(this.parent, 'task');

  importCpuMs(node: string, bundle: Staged, nodeOptions: string): number {
    return this.run(bundle, (file) => importCpuMs(node, file, nodeOptions));
  }

  /** `measure` gets the bundle's entry file while the bundle sits in the task directory. */
  run(bundle: Staged, measure: (file: string) => number): number {
    renameSync(bundle.dir, this.path);
    try {
      return measure(join(this.path, bundle.entry));
    } finally {
      renameSync(this.path, bundle.dir);
    }
  }

  remove(): void {
    rmSync(this.parent, { recursive: true, force: true });
  }
}

/** A bundle's directory while it waits for its turn in the task directory, and its entry file's name there. */
interface Staged {
  dir: string;
  entry: string;
}

const stagedDir = (root: string, index: number) => join(root, 'bundles', String(index).padStart(3, '0'));

/** The floor, bundled by the same function as every Lambda. */
function buildFloor(root: string): Staged {
  const outdir = stagedDir(root, 0);
  bundle(fileURLToPath(new URL('./floor.ts', import.meta.url)), outdir);
  return { dir: outdir, entry: 'index.mjs' };
}

/** A synthesized bundle, staged beside the floor. */
function staged(root: string, index: number, file: string): Staged {
  const outdir = stagedDir(root, index);
  cpSync(dirname(file), outdir, { recursive: true });
  return { dir: outdir, entry: basename(file) };
}

const entryFile = (bundle: Staged) => join(bundle.dir, bundle.entry);

export async function coldStarts(): Promise<ColdStartReport> {
  const out = mkdtempSync(join(tmpdir(), 'bench-synth-'));
  const task = new TaskDir();
  try {
    execFileSync('npx', ['cdk', 'synth', '--quiet', '--output', out], {
      stdio: 'ignore',
      env: { ...process.env, CDK_DISABLE_VERSION_CHECK: '1' },
    });
    const node = runtimeNode();
    const floor = buildFloor(out);
    const bundles = new Map<string, { names: string[]; bundle: Staged; nodeOptions: string }>();
    for (const fn of CloudAssembly.read(out).functions()) {
      const nodeOptions = typeof fn.environment.NODE_OPTIONS === 'string' ? fn.environment.NODE_OPTIONS : '';
      const key = `${fn.file}\0${nodeOptions}`;
      const name = fn.logicalId.replace(/[0-9A-F]{8}$/, '');
      const seen = bundles.get(key);
      if (seen) seen.names.push(name);
      else bundles.set(key, { names: [name], bundle: staged(out, bundles.size + 1, fn.file), nodeOptions });
    }
    const sized = [...bundles.values()].map((b) => ({ ...b, ...bundleKib(entryFile(b.bundle)) }));
    const functions = sized.map(({ names, bundle, nodeOptions, kib, lazyKib }) => ({
      names,
      kib,
      lazyKib,
      ...pairedRatio(
        () => task.importCpuMs(node, floor, nodeOptions),
        () => task.importCpuMs(node, bundle, nodeOptions),
      ),
    }));
    const largest = sized.reduce((a, b) => (b.kib > a.kib ? b : a));
    const sourceMaps = {
      name: largest.names[0]!,
      ...pairedRatio(
        () => task.importCpuMs(node, largest.bundle, ''),
        () => task.importCpuMs(node, largest.bundle, '--enable-source-maps'),
      ),
    };
    const measured = sized.find((b) => b.names.includes(FIRST_REQUEST_FUNCTION));
    if (!measured) throw new Error(`no bundle for ${FIRST_REQUEST_FUNCTION} in the synthesized stack`);
    const setup = await firstRequestSetup();
    let firstRequest: ColdStartReport['firstRequest'];
    try {
      firstRequest = {
        name: FIRST_REQUEST_FUNCTION,
        ...pairedRatio(
          () => task.run(floor, (file) => scriptCpuMs(node, setup.floorScript(file), measured.nodeOptions, setup.env)),
          () => task.run(measured.bundle, (file) => scriptCpuMs(node, setup.functionScript(file), measured.nodeOptions, setup.env)),
        ),
      };
    } finally {
      await setup.stop();
    }
    const nodeVersion = execFileSync(node, ['--version']).toString().trim();
    return { nodeVersion, pinned: PINNED, floorKib: bundleKib(entryFile(floor)).kib, functions, sourceMaps, firstRequest };
  } finally {
    rmSync(out, { recursive: true, force: true });
    task.remove();
  }
}
