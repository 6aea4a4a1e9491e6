/**
 * Which Node major starts the Lambda bundles faster? Run by hand when a new
 * Lambda Node runtime comes out (the choice is recorded in docs/testing.md):
 *
 *   npx tsx bench/node-init.ts 22 24      # the first major is the yardstick
 *
 * It synthesizes the stack, takes the largest, the median and the smallest
 * bundle, and imports each in fresh processes of every major in turn (each
 * major's official binary, from the `node` package on npm), with the
 * NODE_OPTIONS the stack gives the function. It reports the CPU time of the
 * import (what a small Lambda pays for: its CPU share is the limit), as the
 * median of paired ratios to the first major.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importCpuMs, nodeBinary } from './import-cpu.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 21);
const majors = process.argv.slice(2).map(Number);
if (majors.length < 2 || majors.some((m) => !Number.isInteger(m))) {
  console.error('usage: npx tsx bench/node-init.ts <yardstick major> <other major>...');
  process.exit(2);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const out = mkdtempSync(join(tmpdir(), 'node-init-'));
try {
  execFileSync('npx', ['cdk', 'synth', '--quiet', '--output', out], {
    stdio: 'ignore',
    env: { ...process.env, CDK_DISABLE_VERSION_CHECK: '1' },
  });
  const template = JSON.parse(readFileSync(join(out, 'MessagingAndEmailValidationStack.template.json'), 'utf8'));
  const bundles = new Map<string, { name: string; file: string; bytes: number; nodeOptions: string }>();
  type Resource = { Type: string; Metadata?: Record<string, string>; Properties: { Environment?: { Variables?: Record<string, string> } } };
  for (const [id, r] of Object.entries<Resource>(template.Resources)) {
    const asset = r.Type === 'AWS::Lambda::Function' ? r.Metadata?.['aws:asset:path'] : undefined;
    if (!asset || bundles.has(asset)) continue;
    const file = join(out, asset, 'index.mjs');
    const nodeOptions = r.Properties.Environment?.Variables?.NODE_OPTIONS ?? '';
    bundles.set(asset, { name: id.replace(/[0-9A-F]{8}$/, ''), file, bytes: statSync(file).size, nodeOptions });
  }
  const bySize = [...bundles.values()].sort((a, b) => b.bytes - a.bytes);
  const picked = [...new Set([bySize[0]!, bySize[Math.floor(bySize.length / 2)]!, bySize[bySize.length - 1]!])];
  const binaries = majors.map(nodeBinary);

  console.log(`Import CPU time as a ratio to Node ${majors[0]}: median of ${RUNS} paired fresh processes (interquartile range)`);
  console.log(`| bundle | KiB | ${majors.map((m) => `Node ${m}`).join(' | ')} |`);
  console.log(`|---|---|${majors.map(() => '---|').join('')}`);
  for (const bundle of picked) {
    const samples = binaries.map(() => [] as number[]);
    for (let run = 0; run < RUNS; run++) {
      // Rotate the order so that no major always runs first after a pause.
      for (let k = 0; k < binaries.length; k++) {
        const i = (run + k) % binaries.length;
        samples[i]!.push(importCpuMs(binaries[i]!, bundle.file, bundle.nodeOptions));
      }
    }
    const cells = samples.map((s) => {
      const ratios = s.map((v, run) => v / samples[0]![run]!).sort((a, b) => a - b);
      const quartile = (q: number) => ratios[Math.floor((ratios.length - 1) * q)]!.toFixed(2);
      return `${median(ratios).toFixed(2)}× (IQR ${quartile(0.25)}–${quartile(0.75)})`;
    });
    console.log(`| ${bundle.name} | ${(bundle.bytes / 1024).toFixed(0)} | ${cells.join(' | ')} |`);
  }
} finally {
  rmSync(out, { recursive: true, force: true });
}
