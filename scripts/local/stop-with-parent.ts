/**
 * Runs `stop` once on Ctrl-C (SIGINT), a stop button (SIGTERM), a closed
 * terminal (SIGHUP), or when the process that started this one is gone.
 * The last is for `npm run`: npm passes SIGTERM and SIGINT to the shell it
 * ran the script in, which dies without passing them on, so a script only
 * learns of it by being handed to another parent.
 */
export function stopWithParent(stop: () => Promise<void> | void): void {
  let stopping = false;
  const once = () => {
    if (stopping) return;
    stopping = true;
    void stop();
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, once);
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) once();
  }, 250).unref();
}
