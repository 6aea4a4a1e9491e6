import { createServer } from 'node:net';

/** Asks the OS for a free loopback port. */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

export async function waitFor(check: () => Promise<unknown>, what: string, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > until)
        throw new Error(`${what} did not become ready within ${timeoutMs} ms: ${(error as Error).message}`, { cause: error });
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** Whether something already listens on this port (on loopback, where the local stack serves). */
export const portInUse = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(true));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(false)));
  });
