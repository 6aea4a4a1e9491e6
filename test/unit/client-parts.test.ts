import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../../clients/typescript/backoff.ts';
import { RecentIds } from '../../clients/typescript/recent-ids.ts';

describe("the realtime helper's backoff", () => {
  const options = { initialMs: 500, maxMs: 30_000 };

  it('doubles its step from initialMs, keeping half and drawing the other half', () => {
    // Given the lowest and the highest draw, then each attempt's delay lies in [step / 2, step]
    const low = [0, 1, 2, 3].map((attempt) => backoffDelay(attempt, options, () => 0));
    const high = [0, 1, 2, 3].map((attempt) => backoffDelay(attempt, options, () => 1));
    expect(low).toEqual([250, 500, 1_000, 2_000]);
    expect(high).toEqual([500, 1_000, 2_000, 4_000]);
  });

  it('never waits longer than maxMs, however many attempts failed', () => {
    for (const attempt of [6, 7, 20, 1_000, 10_000]) {
      expect(backoffDelay(attempt, options, () => 1)).toBe(30_000);
      expect(backoffDelay(attempt, options, () => 0)).toBe(15_000);
    }
  });
});

describe('RecentIds', () => {
  it('remembers the last ids up to its capacity, forgetting the oldest first', () => {
    // Given room for 3 ids, when 5 are added, then the last 3 are known and the first 2 forgotten
    const ids = new RecentIds(3);
    for (const id of ['a', 'b', 'c', 'd', 'e']) ids.add(id);
    expect(['a', 'b', 'c', 'd', 'e'].map((id) => ids.has(id))).toEqual([false, false, true, true, true]);
  });

  it('does not count an id added twice as two', () => {
    const ids = new RecentIds(2);
    for (const id of ['a', 'b', 'b', 'b']) ids.add(id);
    expect(ids.has('a')).toBe(true);
  });
});
