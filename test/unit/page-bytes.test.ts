import { describe, expect, it } from 'vitest';
import { elementBytes, fittedPage, MAX_PAGE_BYTES } from '#shared/messaging/size';
import { batchesOf } from '#shared/util/sqs';

/** Items of about `bytes` each as a response counts them. */
const items = (count: number, bytes: number) => Array.from({ length: count }, (_, i) => ({ i, pad: 'x'.repeat(bytes - 20) }));
const total = (list: unknown[]) => list.reduce<number>((n, item) => n + elementBytes(item), 0);

describe('a page within one response', () => {
  it('keeps a page that fits as it is', () => {
    const page = items(100, 1_000);
    expect(fittedPage(page, false)).toEqual({ items: page, hasMore: false });
    expect(fittedPage(page, true).hasMore).toBe(true);
  });

  it('cuts a page read forward at its end, and says more follow', () => {
    // Given 100 items of about 100 KB, twice what a response holds
    const page = items(100, 100_000);
    // When fitted: then it keeps the first ones, as many as fit, and has more
    const fitted = fittedPage(page, false);
    expect(fitted.hasMore).toBe(true);
    expect(fitted.items).toEqual(page.slice(0, fitted.items.length));
    expect(total(fitted.items)).toBeLessThanOrEqual(MAX_PAGE_BYTES);
    expect(total(page.slice(0, fitted.items.length + 1))).toBeGreaterThan(MAX_PAGE_BYTES);
  });

  it('cuts a page read backwards at its front, keeping the items nearest the cursor', () => {
    const page = items(100, 100_000);
    const fitted = fittedPage(page, false, true);
    expect(fitted.hasMore).toBe(true);
    expect(fitted.items).toEqual(page.slice(page.length - fitted.items.length));
    expect(total(fitted.items)).toBeLessThanOrEqual(MAX_PAGE_BYTES);
  });

  it('keeps at least one item, however large', () => {
    const page = items(3, MAX_PAGE_BYTES + 10);
    expect(fittedPage(page, false)).toEqual({ items: page.slice(0, 1), hasMore: true });
    expect(fittedPage(page, false, true)).toEqual({ items: page.slice(2), hasMore: true });
  });
});

describe('queue sends in batches SQS takes', () => {
  it('sends at most ten bodies and 256 KiB a batch, in order, a larger body alone', () => {
    // Given bodies of 100 KB, small ones, and one of 300 KB
    const big = 'b'.repeat(100_000);
    const bodies = [big, big, big, 's', 's', 'h'.repeat(300_000), ...Array.from({ length: 12 }, (_, i) => `t${i}`)];
    // When batched: then no batch passes ten bodies or 256 KiB but for the one body larger alone, and the order holds
    const batches = batchesOf(bodies);
    expect(batches.flat()).toEqual(bodies);
    for (const batch of batches) {
      expect(batch.length).toBeLessThanOrEqual(10);
      if (batch.length > 1) expect(batch.reduce((n, b) => n + b.length, 0)).toBeLessThanOrEqual(256 * 1024);
    }
    expect(batches.map((b) => b.length)).toEqual([2, 3, 1, 10, 2]);
  });
});
