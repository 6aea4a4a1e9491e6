/**
 * Something imported on first use rather than with the bundle (code splitting
 * gives it a chunk of its own: docs/performance.md, "Cold start"), for code
 * that then uses it synchronously. `load()` imports it once per process;
 * `get()` before that has finished throws `notLoaded`, naming what to await,
 * rather than answering without it.
 */
export function loadedOnFirstUse<T>(load: () => Promise<T>, notLoaded: string): { load(): Promise<void>; get(): T } {
  let value: T | undefined;
  let loading: Promise<void> | undefined;
  return {
    load: () =>
      (loading ??= load().then((loaded) => {
        value = loaded;
      })),
    get: () => {
      if (value === undefined) throw new Error(notLoaded);
      return value;
    },
  };
}
