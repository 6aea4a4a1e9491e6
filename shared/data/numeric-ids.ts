import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#shared/db/client';
import { emailKeys } from '#shared/db/keys';

/**
 * Numeric ids for emails and lists: unique per deployment, increasing with
 * creation time, and with no shared counter on the hot path (Snowflake-style):
 *
 *   id = (ms since 2025-01-01) * 4096 + slot * 16 + sequence
 *
 * `slot` (0..255) comes from one counter increment per container cold start;
 * `sequence` (0..15) counts ids within a millisecond. Past 16 ids in one ms
 * the generator borrows the next millisecond, so ids never repeat or go back.
 * That stays below 2^53 until about 2094, so ids are exact JSON numbers.
 */
const EPOCH_MS = Date.UTC(2025, 0, 1);
const SLOTS = 256;
const PER_MS = 16;

let slot: Promise<number> | undefined;
let lastMs = 0;
let sequence = 0;

async function containerSlot(): Promise<number> {
  slot ??= db()
    .send(
      new UpdateCommand({
        TableName: tableName(),
        Key: emailKeys.workerCounter(),
        UpdateExpression: 'ADD next_slot :one',
        ExpressionAttributeValues: { ':one': 1 },
        ReturnValues: 'UPDATED_NEW',
      }),
    )
    .then((out) => Number(out.Attributes!.next_slot) % SLOTS)
    .catch((error) => {
      slot = undefined;
      throw error;
    });
  return slot;
}

/** `count` new ids, ascending, each greater than `above` (the newest id already stored where order matters). */
export async function newNumericIds(count: number, above = 0): Promise<number[]> {
  const mySlot = await containerSlot();
  const floorMs = Math.floor(above / 4096) + EPOCH_MS;
  const ids: number[] = [];
  for (let i = 0; i < count; i++) {
    const now = Math.max(Date.now(), floorMs + 1);
    if (now > lastMs) {
      lastMs = now;
      sequence = 0;
    } else if (++sequence >= PER_MS) {
      lastMs += 1;
      sequence = 0;
    }
    ids.push((lastMs - EPOCH_MS) * 4096 + mySlot * PER_MS + sequence);
  }
  return ids;
}

/** For tests: forget the slot, as a new container would. */
export function resetNumericIds(): void {
  slot = undefined;
  lastMs = 0;
  sequence = 0;
}
