import { describe, expect, it } from 'vitest';
import { BLOCK_SIZE, newNumericIds, resetNumericIds, takeIdBlock } from '#shared/data/numeric-ids';

describe('numeric ids against DynamoDB Local', () => {
  it('are strictly increasing within a container, and exact JSON numbers', async () => {
    // Given a container that asks for ids in several calls
    const ids = [...(await newNumericIds(200)), ...(await newNumericIds(1)), ...(await newNumericIds(300))];
    // Then each is larger than the one before and a safe integer
    expect(ids.every((id, i) => i === 0 || id > ids[i - 1]!)).toBe(true);
    expect(ids.every((id) => Number.isSafeInteger(id) && id > 0)).toBe(true);
  });

  it('hand 1,000 concurrent allocators distinct blocks, with no failure and no duplicate', async () => {
    // When 1,000 containers take a block at the same moment
    const blocks = await Promise.all(Array.from({ length: 1000 }, () => takeIdBlock()));
    // Then every one succeeds, and no two blocks overlap
    expect(blocks).toHaveLength(1000);
    const starts = new Set(blocks.map((b) => b.start));
    expect(starts.size).toBe(1000);
    expect(blocks.every((b) => b.end - b.start === BLOCK_SIZE && b.start % BLOCK_SIZE === 0)).toBe(true);
  });

  it('never repeat an id across containers or concurrent callers', async () => {
    // Given many callers in one container, and other containers (simulated by forgetting the block)
    const batches = await Promise.all(Array.from({ length: 50 }, (_, i) => newNumericIds(1 + (i % 40))));
    resetNumericIds();
    batches.push(...(await Promise.all(Array.from({ length: 50 }, () => newNumericIds(30)))));
    // Then all ids are distinct and each batch is consecutive
    const all = batches.flat();
    expect(new Set(all).size).toBe(all.length);
    expect(batches.every((b) => b.every((id, i) => i === 0 || id === b[i - 1]! + 1))).toBe(true);
  });

  it('give a container that starts later larger ids', async () => {
    const [first] = await newNumericIds(1);
    resetNumericIds(); // another container, whose block is younger
    const [other] = await newNumericIds(1);
    expect(other).toBeGreaterThan(first!);
  });
});
