import { update } from '#shared/db/expression';
import { updateItem } from '#shared/db/items';
import { keys } from '#shared/db/keys';

/**
 * Numeric ids for emails, hi/lo style: a container takes a block
 * of BLOCK_SIZE ids with one atomic `ADD` on a global counter and hands them
 * out from memory. An `ADD` never fails on contention, so any number of
 * containers can allocate at once; ids are unique per deployment and
 * increase within a block.
 *
 * A block is used for at most BLOCK_MAX_AGE_MS. Blocks are handed out in
 * counter order, so an id from a younger block is always larger: two ids
 * made more than that apart, in any containers, are ordered by creation time.
 */
export const BLOCK_SIZE = 1000;
const BLOCK_MAX_AGE_MS = 1000;

let current: { next: number; end: number; takenAt: number } | undefined;
let taking: Promise<void> | undefined;

/** One block: ids `start` to `end - 1`. The counter starts at 1, so ids are never 0. */
export async function takeIdBlock(): Promise<{ start: number; end: number }> {
  const out = await updateItem(keys.idBlocks.key(), update().add`next_block ${1}`, 'UPDATED_NEW');
  const block = Number(out.next_block);
  return { start: block * BLOCK_SIZE, end: (block + 1) * BLOCK_SIZE };
}

async function takeBlock(): Promise<void> {
  const { start, end } = await takeIdBlock();
  current = { next: start, end, takenAt: Date.now() };
}

const usable = (count: number) =>
  current !== undefined && current.end - current.next >= count && Date.now() - current.takenAt < BLOCK_MAX_AGE_MS;

/** `count` new ids (at most BLOCK_SIZE), ascending and consecutive. */
export async function newNumericIds(count: number): Promise<number[]> {
  if (count < 1 || count > BLOCK_SIZE) throw new RangeError(`between 1 and ${BLOCK_SIZE} ids at a time`);
  // Concurrent callers share one block request; each retakes only if the fresh block is already spent.
  for (let attempt = 0; !usable(count); attempt++) {
    if (attempt >= 10) throw new Error('could not take a block of ids');
    taking ??= takeBlock().finally(() => (taking = undefined));
    await taking;
  }
  const start = current!.next;
  current!.next += count;
  return Array.from({ length: count }, (_, i) => start + i);
}

/** For tests: forget the block, as a new container would. */
export function resetNumericIds(): void {
  current = undefined;
}
