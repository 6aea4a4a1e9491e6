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
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { BUNDLING } from '../infra/functions.ts';
import { CloudAssembly } from '../scripts/local/cloud-assembly.ts';

export const COLD_START_TARGET = 1.15;
const RUNS = Math.max(7, Number(process.env.BENCH_RUNS ?? 9));

export interface ColdStart {
  /** Logical ids (without the hash) of the functions sharing this bundle. */
  names: string[];
  kib: number;
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

async function buildFloor(dir: string): Promise<string> {
  const outfile = join(dir, 'floor', 'index.mjs');
  await build({
    entryPoints: [fileURLToPath(new URL('./floor.ts', import.meta.url))],
    outfile,
    bundle: true,
    platform: 'node',
    minify: BUNDLING.minify,
    sourcemap: BUNDLING.sourceMap,
    format: 'esm',
    target: BUNDLING.target,
    mainFields: BUNDLING.mainFields,
    banner: { js: BUNDLING.banner },
    logLevel: 'error',
  });
  return outfile;
}

export async function coldStarts(): Promise<ColdStartReport> {
  const out = mkdtempSync(join(tmpdir(), 'bench-synth-'));
  try {
    execFileSync('npx', ['cdk', 'synth', '--quiet', '--output', out], {
      stdio: 'ignore',
      env: { ...process.env, CDK_DISABLE_VERSION_CHECK: '1' },
    });
    const floor = await buildFloor(out);
    const bundles = new Map<string, { names: string[]; file: string; nodeOptions: string }>();
    for (const fn of CloudAssembly.read(out).functions()) {
      const nodeOptions = typeof fn.environment.NODE_OPTIONS === 'string' ? fn.environment.NODE_OPTIONS : '';
      const key = `${fn.file}\0${nodeOptions}`;
      const name = fn.logicalId.replace(/[0-9A-F]{8}$/, '');
      const seen = bundles.get(key);
      if (seen) seen.names.push(name);
      else bundles.set(key, { names: [name], file: fn.file, nodeOptions });
    }
    const functions = [...bundles.values()].map(({ names, file, nodeOptions }) => ({
      names,
      kib: statSync(file).size / 1024,
      ...pairedRatio(
        () => importCpuMs(floor, nodeOptions),
        () => importCpuMs(file, nodeOptions),
      ),
    }));
    const largest = [...bundles.values()].reduce((a, b) => (statSync(b.file).size > statSync(a.file).size ? b : a));
    const sourceMaps = {
      name: largest.names[0]!,
      ...pairedRatio(
        () => importCpuMs(largest.file, ''),
        () => importCpuMs(largest.file, '--enable-source-maps'),
      ),
    };
    return { floorKib: statSync(floor).size / 1024, functions, sourceMaps };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
