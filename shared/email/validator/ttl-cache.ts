/**
 * Per-process memo of asynchronous answers (DNS lookups, probe results) with a
 * time-to-live. The promise is stored as soon as the work starts, so ten
 * thousand addresses on fifty domains start fifty lookups, not ten thousand:
 * later callers join the one in flight.
 *
 * A rejected promise is dropped at once, and `keepFor` lets the caller keep a
 * settled value for less time (0 = not at all), so transient failures are
 * retried by the next caller instead of being remembered for the full TTL.
 * The entry count is bounded so a long-lived process cannot grow without end.
 */
export class TtlCache<T> {
  private readonly entries = new Map<string, { promise: Promise<T>; expiresAt: number }>();

  constructor(private readonly maxEntries = 10_000) {}

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
  }

  /** Whether `key` would be answered from the cache now (settled or in flight). */
  has(key: string): boolean {
    return (this.entries.get(key)?.expiresAt ?? 0) > Date.now();
  }

  /**
   * The cached promise for `key`, or the one `compute` starts. `ttlMs` applies
   * from the moment the value settles; `keepFor(value)` may shorten it.
   */
  remember(key: string, ttlMs: number, compute: () => Promise<T>, keepFor?: (value: T) => number): Promise<T> {
    const now = Date.now();
    const existing = this.entries.get(key);
    if (existing && existing.expiresAt > now) return existing.promise;
    if (existing) this.entries.delete(key);

    const promise = compute();
    const entry = { promise, expiresAt: Number.POSITIVE_INFINITY };
    this.entries.set(key, entry);
    this.evictOverflow();

    const forget = () => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    };
    promise.then((value) => {
      const keepMs = Math.min(ttlMs, keepFor ? keepFor(value) : ttlMs);
      if (keepMs <= 0) forget();
      else entry.expiresAt = Date.now() + keepMs;
    }, forget);
    return promise;
  }

  private evictOverflow(): void {
    // Maps iterate in insertion order: drop the oldest entries first.
    for (const key of this.entries.keys()) {
      if (this.entries.size <= this.maxEntries) break;
      this.entries.delete(key);
    }
  }
}
