import { randomUUID } from 'node:crypto';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#shared/db/client';
import { emailKeys } from '#shared/db/keys';
import { isConditionFailure } from '#shared/data/errors';

/**
 * Numeric ids for emails and lists: unique per deployment, increasing with
 * creation time, and with no shared counter on the hot path (Snowflake-style):
 *
 *   id = (ms since 2025-01-01) * 4096 + slot * 16 + sequence
 *
 * `slot` (0..255) is leased by this container (a conditional write, renewed
 * well before it lapses), so no two live containers share one; `sequence`
 * (0..15) counts ids within a millisecond. Past 16 ids in one ms the generator
 * borrows the next millisecond, so ids never repeat or go back. That stays
 * below 2^53 until about 2094, so ids are exact JSON numbers.
 */
const EPOCH_MS = Date.UTC(2025, 0, 1);
const SLOTS = 256;
const PER_MS = 16;
const LEASE_MS = 15 * 60_000;
/** Renew when less than this is left, so a lease never lapses while ids are being made. */
const RENEW_BEFORE_MS = 5 * 60_000;

const owner = randomUUID();
let lease: { slot: number; until: number } | undefined;
let leasing: Promise<number> | undefined;
let lastMs = 0;
let sequence = 0;

async function tryLease(slot: number, renew: boolean): Promise<boolean> {
  const now = Date.now();
  try {
    if (renew) {
      await db().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: emailKeys.idSlot(slot),
          UpdateExpression: 'SET lease_until = :until',
          ConditionExpression: '#owner = :me',
          ExpressionAttributeNames: { '#owner': 'owner' },
          ExpressionAttributeValues: { ':until': now + LEASE_MS, ':me': owner },
        }),
      );
    } else {
      await db().send(
        new PutCommand({
          TableName: tableName(),
          Item: { ...emailKeys.idSlot(slot), owner, lease_until: now + LEASE_MS },
          ConditionExpression: 'attribute_not_exists(pk) OR lease_until < :now',
          ExpressionAttributeValues: { ':now': now },
        }),
      );
    }
    lease = { slot, until: now + LEASE_MS };
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

async function acquire(): Promise<number> {
  // A frozen container may wake after its lease lapsed: renewal then fails and it leases afresh.
  if (lease && (await tryLease(lease.slot, true))) return lease.slot;
  lease = undefined;
  const out = await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: emailKeys.workerCounter(),
      UpdateExpression: 'ADD next_slot :one',
      ExpressionAttributeValues: { ':one': 1 },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  const start = Number(out.Attributes!.next_slot);
  for (let i = 0; i < SLOTS; i++) {
    const slot = (start + i) % SLOTS;
    if (await tryLease(slot, false)) return slot;
  }
  throw new Error(`all ${SLOTS} id slots are leased`);
}

async function currentSlot(): Promise<number> {
  if (lease && Date.now() < lease.until - RENEW_BEFORE_MS) return lease.slot;
  leasing ??= acquire().finally(() => (leasing = undefined));
  return leasing;
}

/** `count` new ids, ascending, each greater than `above` (the newest id already stored where order matters). */
export async function newNumericIds(count: number, above = 0): Promise<number[]> {
  const slot = await currentSlot();
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
    ids.push((lastMs - EPOCH_MS) * 4096 + slot * PER_MS + sequence);
  }
  return ids;
}

/** For tests: give up the lease, as a container that went away would (without deleting it). */
export function resetNumericIds(): void {
  lease = undefined;
  lastMs = 0;
  sequence = 0;
}
