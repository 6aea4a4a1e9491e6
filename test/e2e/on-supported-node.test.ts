/**
 * `npm start` and `npm test` run their command lines through
 * scripts/on-supported-node.js: on a Node older than `engines` accepts they
 * run on the `.nvmrc` major from the npm `node` package instead. Run here as
 * real processes: under Node 20 (the official binary, from the same package)
 * for that path, under this run's Node for the rest.
 */
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { DEPLOY_NODE_MAJOR } from '../../infra/runtime.ts';
import { officialNode } from '../steps/official-node.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WRAPPER = join(ROOT, 'scripts/on-supported-node.js');
/** The Node the README says `npm start` and `npm test` work on, though `engines` no longer accepts it. */
const OLD_MAJOR = 20;
const ENGINES: string = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).engines.node;

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Kills a process group this file started, whatever is left of it. */
function killGroup(pid: number | undefined) {
  try {
    process.kill(-pid!, 'SIGKILL');
  } catch {
    // all gone already
  }
}

/**
 * The wrapper under `node`, with that Node's directory first on PATH (as on a machine that has only it),
 * as `npm start` runs it (npm_lifecycle_event). `started` runs once the line has printed its first output.
 * It leads a process group of its own, killed when the test ends, so a line it failed to stop does not outlive the test.
 */
function wrapped(node: string, line: string, args: string[] = [], started?: (pid: number) => void): Promise<Run> {
  const child = spawn(node, [WRAPPER, line, ...args], {
    cwd: ROOT,
    env: { ...process.env, PATH: [dirname(node), process.env.PATH].join(delimiter), npm_lifecycle_event: 'start' },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  onTestFinished(() => killGroup(child.pid));
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    if (!stdout) started?.(child.pid!);
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
}

/** A line whose node prints `ready`, then on SIGTERM prints what it got and exits 0. */
const WAITS_FOR_SIGTERM = `exec node -e "process.on('SIGTERM', () => { console.log('got SIGTERM'); process.exit(0); }); console.log('ready'); setInterval(() => {}, 1000);"`;

describe('npm start and npm test on an older Node', () => {
  let oldNode: string;

  beforeAll(() => {
    // Given the official Node 20, which engines refuses
    oldNode = officialNode(OLD_MAJOR);
    const version = execFileSync(oldNode, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
    expect(version.split('.')[0]).toBe(String(OLD_MAJOR));
    expect(Number(/^>=\s*(\d+)/.exec(ENGINES)?.[1])).toBeGreaterThan(OLD_MAJOR);
  }, 300_000);

  it('run their line on the .nvmrc major, every command of it, with the arguments npm appends, saying so in one line', async () => {
    // When the wrapper runs on Node 20 a line of two commands, given arguments a shell must not split or expand
    const run = await wrapped(
      oldNode,
      `node -p process.versions.node && exec node -e "console.log(JSON.stringify(process.argv.slice(1)))"`,
      ['a b', '$HOME', '--fresh'],
    );

    // Then both ran on the .nvmrc major, the second with the arguments as given
    expect(run.code, run.stderr).toBe(0);
    const [first, second] = run.stdout.trim().split('\n');
    expect(first!.split('.')[0]).toBe(String(DEPLOY_NODE_MAJOR));
    expect(JSON.parse(second!)).toEqual(['a b', '$HOME', '--fresh']);
    // And one line on stderr says why, naming both versions
    const versionPattern = (major: number) => `${major}\\.\\d+\\.\\d+`;
    expect(run.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        new RegExp(
          `^npm start: Node ${versionPattern(OLD_MAJOR)} is older than engines\\.node \\(${ENGINES}\\): running on Node ${versionPattern(DEPLOY_NODE_MAJOR)} `,
        ),
      ),
    ]);
  });

  it("pass on the line's exit code", async () => {
    // When the line fails on the .nvmrc major
    const run = await wrapped(oldNode, 'node -e "process.exit(7)"');
    // Then the wrapper on Node 20 fails with its code
    expect(run.code).toBe(7);
  });

  it('are what a single file needs there too: vitest started directly on Node 20 refuses at once and says what to run', () => {
    // When vitest itself is started with Node 20 (npx vitest run <file> on a machine whose Node is 20)
    let failed: { status: number | null; stderr: string } = { status: 0, stderr: '' };
    try {
      execFileSync(oldNode, ['node_modules/vitest/vitest.mjs', 'run', 'test/unit/reactions.test.ts'], {
        cwd: ROOT,
        stdio: 'pipe',
        timeout: 60_000,
      });
    } catch (error) {
      failed = error as { status: number | null; stderr: string };
    }

    // Then it fails before any test, naming the Node it found, the range needed and the command that works
    expect(failed.status).not.toBe(0);
    expect(String(failed.stderr)).toContain(`older than the project needs (${ENGINES}): run \`npm test -- <file>\``);
  }, 90_000);

  it('pass SIGTERM on to the line, which stops as it chooses', async () => {
    // When the wrapper on Node 20 is sent SIGTERM once the line is running
    const run = await wrapped(oldNode, WAITS_FOR_SIGTERM, [], (pid) => process.kill(pid, 'SIGTERM'));
    // Then the line got it, and its exit is the wrapper's
    expect(run.stdout).toBe('ready\ngot SIGTERM\n');
    expect(run).toMatchObject({ code: 0, signal: null });
  });
});

describe('npm start and npm test on a Node engines accepts', () => {
  it('run their line directly and silently', async () => {
    // When the wrapper runs on this run's Node (the .nvmrc major in CI)
    const run = await wrapped(process.execPath, 'exec node -p process.execPath');
    // Then the line ran on that same Node, and nothing was said
    expect(run).toMatchObject({ code: 0, stdout: `${process.execPath}\n`, stderr: '' });
  });

  it('end the way the line ended: with its exit code, or by the signal that ended it', async () => {
    expect(await wrapped(process.execPath, 'exit 3')).toMatchObject({ code: 3, signal: null });
    expect(await wrapped(process.execPath, 'exec node -e "process.kill(process.pid, \'SIGKILL\')"')).toMatchObject({
      code: null,
      signal: 'SIGKILL',
    });
  });

  it('stop the line when the process that started them is gone (npm passes SIGTERM to a shell that dies of it)', async () => {
    // Given the wrapper started by a shell, as npm starts it (in a process group of their own, killed at the end whatever happened)
    const shell = spawn('sh', ['-c', `"${process.execPath}" "${WRAPPER}" "$1"; echo "wrapper exited $?"`, 'sh', WAITS_FOR_SIGTERM], {
      cwd: ROOT,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    onTestFinished(() => killGroup(shell.pid));
    let stdout = '';
    const ready = new Promise<void>((resolve) =>
      shell.stdout.on('data', (chunk) => {
        stdout += chunk;
        if (stdout.includes('ready')) resolve();
      }),
    );
    const closed = new Promise((resolve) => shell.stdout.once('close', resolve));
    await ready;

    // When that shell is killed outright
    shell.kill('SIGKILL');
    await closed;

    // Then the line is sent SIGTERM, and nothing more is written once it has stopped
    expect(stdout).toBe('ready\ngot SIGTERM\n');
  });
});
