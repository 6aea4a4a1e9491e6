import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/local/ports.ts';
import { eventually } from '../steps/eventually.ts';

/**
 * `npm run dns:demo` as a person or an IDE runs it: Ctrl-C (SIGINT to the
 * terminal's whole process group) and an IDE's stop button (SIGTERM to the
 * npm process alone) both stop every process it started.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** A safety bound: the script notices its parent is gone within a quarter of a second. */
const STOP_TIMEOUT_MS = 10_000;
const started = new Set<ChildProcess>();

afterAll(() => {
  for (const proc of started) {
    try {
      process.kill(-proc.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

/** The pids of a process group. */
const groupPids = (pgid: number) =>
  execFileSync('ps', ['-eo', 'pid=,pgid='], { encoding: 'utf8' })
    .split('\n')
    .map((line) => line.trim().split(/\s+/).map(Number))
    .filter(([, group]) => group === pgid)
    .map(([pid]) => pid!);

describe('npm run dns:demo', () => {
  it.each([
    ['SIGTERM', 'npm alone'],
    ['SIGINT', 'the process group (Ctrl-C)'],
  ] as const)('stops all its processes on %s to %s', async (signal, to) => {
    // Given the demo DNS server started through npm, in a process group of its own, serving
    const proc = spawn('npm', ['run', 'dns:demo'], {
      cwd: ROOT,
      env: { ...process.env, DNS_DEMO_PORT: String(await freePort()) },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    started.add(proc);
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    await new Promise<void>((resolve, reject) => {
      let out = '';
      proc.stdout!.on('data', (chunk) => {
        out += chunk;
        if (/^DNS_SERVERS=/m.test(out)) resolve();
      });
      void exited.then(() => reject(new Error(`dns:demo exited before serving: ${out}`)));
    });
    expect(groupPids(proc.pid!).length).toBeGreaterThan(1); // npm, its shell, node
    // When the signal is sent
    process.kill(to === 'npm alone' ? proc.pid! : -proc.pid!, signal);
    // Then every process of the group is gone (what is left named, so a failure says which process missed the stop)
    await eventually(
      () => {
        const left = groupPids(proc.pid!);
        if (left.length > 0)
          throw new Error(execFileSync('ps', ['-o', 'pid=,ppid=,stat=,args=', '-p', left.join(',')], { encoding: 'utf8' }));
        return true;
      },
      { what: 'every process of the group gone', timeoutMs: STOP_TIMEOUT_MS },
    );
    started.delete(proc);
  });

  it('says in one line that its port is taken, and exits 1, rather than printing a stack trace', async () => {
    // Given a port some other process holds (UDP, as the DNS server binds)
    const { createSocket } = await import('node:dgram');
    const taken = createSocket('udp4');
    const port = await freePort();
    await new Promise<void>((resolve) => taken.bind(port, '127.0.0.1', resolve));
    try {
      // When the demo server is started on it
      const proc = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo-dns.ts'], {
        cwd: ROOT,
        env: { ...process.env, DNS_DEMO_PORT: String(port) },
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      started.add(proc);
      let err = '';
      proc.stderr!.on('data', (chunk) => (err += chunk));
      // A server that bound the port anyway would serve until stopped: it is killed after the test, and fails it here.
      const code = await new Promise<number | null>((resolve, reject) => {
        proc.once('exit', resolve);
        proc.stdout!.on('data', (chunk) => {
          if (/^DNS_SERVERS=/m.test(String(chunk))) reject(new Error(`dns:demo served on a taken port: ${chunk}`));
        });
      });
      started.delete(proc);
      // Then it exits 1 with one line naming the port and the variable
      expect(code).toBe(1);
      expect(err.trim()).toBe(
        `npm run dns:demo: port ${port} (DNS_DEMO_PORT) is already in use; choose another: DNS_DEMO_PORT=<port> npm run dns:demo`,
      );
    } finally {
      taken.close();
    }
  });
});
