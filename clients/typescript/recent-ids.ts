/**
 * The ids of the last events delivered, at most `capacity` of them (the
 * oldest forgotten first): enough to recognise an event sent again around a
 * reconnect, in memory bounded however long the app runs.
 */
export class RecentIds {
  readonly #ids = new Set<string>();
  readonly #capacity: number;

  constructor(capacity: number) {
    this.#capacity = Math.max(1, capacity);
  }

  has(id: string): boolean {
    return this.#ids.has(id);
  }

  add(id: string): void {
    this.#ids.add(id);
    // A Set iterates in insertion order: its first value is the oldest id.
    if (this.#ids.size > this.#capacity) this.#ids.delete(this.#ids.values().next().value!);
  }
}
