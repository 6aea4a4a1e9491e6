/**
 * How the benches time a cold start: a bundle imported in a fresh `node`
 * process, on a given Node major's official binary (from the `node` package
 * on npm, kept in npx's cache, as `.ci/run` gets it). This is import CPU on
 * this machine, not Lambda's init: good for comparing bundles in one run, not
 * for comparing runtimes (docs/performance.md, Runtime).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { DEPLOY_NODE_MAJOR } from '../infra/runtime.ts';

/** The official binary of a Node major (the machine's own Node may be another build). */
export function nodeBinary(major: number): string {
  return execFileSync('npx', ['--yes', '--package', `node@${major}`, '--', 'node', '-p', 'process.execPath'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  })
    .toString()
    .trim();
}

/**
 * The Node the functions run on (.nvmrc): import costs differ between majors
 * (a messaging bundle's ratio to the floor read 1.15 on Node 20 and 1.08 on
 * Node 22 in one paired run), so a cold start is timed on the runtime's own.
 */
export const runtimeNode = (): string => nodeBinary(DEPLOY_NODE_MAJOR);

/**
 * Each process runs on one core where `taskset` exists (Linux): a small
 * Lambda has at most one vCPU, and V8's background threads spread over every
 * core add noise. Two copies of the same bundle, timed against each other in
 * 61 pairs, read an interquartile range of 0.90–1.09 unpinned and 0.96–1.04
 * pinned.
 */
const pinned = ((): string[] => {
  // The last core this process may run on ("pid 7's current affinity list: 0-3,6"): a container may allow only some.
  const core = spawnSync('taskset', ['-pc', String(process.pid)])
    .stdout?.toString()
    .match(/(\d+)\s*$/)?.[1];
  return core === undefined ? [] : ['taskset', '-c', core];
})();

/** Whether imports run pinned (the bench's header says so). */
export const PINNED = pinned.length > 0;

/** CPU milliseconds (all threads) a fresh process of `node` spends importing `file`. */
export function importCpuMs(node: string, file: string, nodeOptions: string): number {
  return scriptCpuMs(
    node,
    `const c=process.cpuUsage();await import(${JSON.stringify(file)});const d=process.cpuUsage(c);console.log((d.user+d.system)/1e3)`,
    nodeOptions,
  );
}

/** Runs an ES module `script` in a fresh process of `node` (pinned as above); it prints its CPU milliseconds as its last line. */
export function scriptCpuMs(node: string, script: string, nodeOptions: string, env: Record<string, string> = {}): number {
  const fullEnv = { ...process.env, ...env, NODE_OPTIONS: nodeOptions };
  const [command, ...args] = [...pinned, node, '--input-type=module', '-e', script];
  const lines = execFileSync(command!, args, { env: fullEnv }).toString().trim().split('\n');
  return Number(lines[lines.length - 1]);
}
