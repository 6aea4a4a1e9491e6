import { createHash, randomUUID } from 'node:crypto';
import * as v from 'valibot';
import { parseItem } from '#shared/db/item-schema';
import { txUpdate, type TransactItem } from '#shared/db/batch';
import { isConditionFailure, oldItemOf } from '#shared/db/errors';
import { attr, condition, update } from '#shared/db/expression';
import { deleteItem, getItem, putItem, updateItem, type Item } from '#shared/db/items';
import { keys } from '#shared/db/keys';
import { AGAIN, backoff, retryOnConflict } from '#shared/db/retry';
import { nowSeconds } from '#shared/util/ids';

/** Replays are honoured for 24 h; the TTL attribute lets DynamoDB drop old records. */
export const IDEMPOTENCY_WINDOW_SECONDS = 24 * 60 * 60;
/** A request still "in progress" after this long is assumed crashed and may be taken over by a retry (unless its claim says otherwise). */
const IN_PROGRESS_LEASE_SECONDS = 60;
/** Tries of the writes that end a request's hold on its key (recording the answer, marking it interrupted). */
const FINISH_TRIES = 4;

export interface StoredResponse {
  statusCode: number;
  body: string;
}

/**
 * A request that holds its key. `token` is this attempt's own (the claim's
 * condition recognises it, every later write of the record is conditional on
 * it, so an attempt whose key was taken over can no longer write there).
 * `generation` is the request's: every attempt of one request under one key
 * shares it (a fresh claim after the key was released or expired gets a new
 * one), so effects derived from it are recognised by a retry as its own.
 * `steps` are what earlier attempts recorded as committed (`journalStep`).
 */
export interface Hold {
  accountId: string;
  idempotencyKey: string;
  token: string;
  generation: string;
  createdMs: number;
  resumed: boolean;
  steps: Record<string, unknown>;
}

export type Claim =
  | { kind: 'claimed'; hold: Hold }
  | { kind: 'replay'; response: StoredResponse }
  /** Another attempt holds the key until `leaseUntil` (epoch seconds; 0 when a claim kept meeting others). */
  | { kind: 'in_progress'; leaseUntil: number }
  | { kind: 'mismatch' };

const hash = (value: string) => createHash('sha256').update(value).digest('hex');
const key = (accountId: string, idempotencyKey: string) => keys.idempotency.key({ acct: accountId, key_hash: hash(idempotencyKey) });

// Built in a /* @__PURE__ */ call, so that esbuild drops it from functions that never read this item (shared/db/item-schema.ts).
const recordItem = /* @__PURE__ */ (() =>
  v.object({
    status: v.picklist(['in_progress', 'interrupted', 'completed']),
    fingerprint: v.string(),
    // Absent on records written before tokens existed: such a record is never this attempt's own.
    token: v.optional(v.string(), ''),
    generation: v.optional(v.string()),
    created_ms: v.optional(v.number()),
    lease_until: v.optional(v.number(), 0),
    expires_at: v.number(),
    steps: v.optional(v.record(v.string(), v.unknown()), {}),
    response: v.optional(v.object({ statusCode: v.number(), body: v.string() })),
  }))();
type RecordItem = v.InferOutput<typeof recordItem>;

/**
 * Claims the key for this request, or tells what the earlier request with it
 * did. A claim that meets its own token (the SDK retried a put whose answer
 * was lost) is this request's. An interrupted record, or one whose lease ran
 * out, is taken over with its generation and steps: the retry continues the
 * same request. A record released (or expired) meanwhile is claimed again, a
 * bounded number of times.
 */
export function claimIdempotencyKey(
  accountId: string,
  idempotencyKey: string,
  fingerprint: string,
  /** How long this attempt holds the key before a later one may take it over: as long as it can take. */
  leaseSeconds = IN_PROGRESS_LEASE_SECONDS,
): Promise<Claim> {
  const token = randomUUID();
  const fingerprintHash = hash(fingerprint);
  const hold = (record: Pick<RecordItem, 'generation' | 'created_ms' | 'steps'>, resumed: boolean): Claim => ({
    kind: 'claimed',
    hold: {
      accountId,
      idempotencyKey,
      token,
      generation: record.generation ?? token,
      createdMs: record.created_ms ?? Date.now(),
      resumed,
      steps: record.steps,
    },
  });
  const generation = randomUUID();
  const createdMs = Date.now();
  return retryOnConflict<Claim>(
    async () => {
      const now = nowSeconds();
      let existing: Item | undefined;
      try {
        await putItem(
          {
            ...key(accountId, idempotencyKey),
            status: 'in_progress',
            fingerprint: fingerprintHash,
            token,
            generation,
            created_ms: createdMs,
            lease_until: now + leaseSeconds,
            expires_at: now + IDEMPOTENCY_WINDOW_SECONDS,
            steps: {},
          },
          // Expired records may linger until TTL deletion runs: treat them as absent.
          condition`attribute_not_exists(pk) OR expires_at < ${now}`,
          undefined,
          { oldOnFailure: true },
        );
        return hold({ generation, created_ms: createdMs, steps: {} }, false);
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        existing = oldItemOf(error) ?? (await getItem(key(accountId, idempotencyKey), true));
      }
      if (!existing) return AGAIN;
      const record = parseItem(recordItem, existing);
      if (record.token === token) return hold(record, false);
      if (record.fingerprint !== fingerprintHash) return { kind: 'mismatch' } as const;
      if (record.status === 'completed') return { kind: 'replay', response: record.response! } as const;
      if (record.status === 'in_progress' && record.lease_until >= now)
        return { kind: 'in_progress', leaseUntil: record.lease_until } as const;
      const taken = await takeOver(accountId, idempotencyKey, record, token, leaseSeconds);
      return taken ? hold(taken, true) : AGAIN;
    },
    { exhausted: () => ({ kind: 'in_progress', leaseUntil: 0 }) },
  ).catch(async (error: unknown) => {
    // The claim (or a take-over) may have landed with every answer lost: a record left in progress under
    // this token would turn the client's retries away with 409 until its lease ends. Marked interrupted,
    // the retry takes it over at once. Nothing is marked when the record is not ours.
    await finishWrite(() =>
      updateItem(key(accountId, idempotencyKey), update().set`${attr('status')} = ${'interrupted'}`.when`${attr('token')} = ${token}`),
    );
    throw error;
  });
}

/** Takes an interrupted (or lease-expired) record over from the attempt that held it; undefined when another did first. */
async function takeOver(
  accountId: string,
  idempotencyKey: string,
  record: RecordItem,
  token: string,
  leaseSeconds: number,
): Promise<RecordItem | undefined> {
  const now = nowSeconds();
  const changes = update().set`${attr('status')} = ${'in_progress'}, ${attr('token')} = ${token}, lease_until = ${now + leaseSeconds}`
    .when`${attr('status')} = ${record.status}`;
  // The attempt it takes over from must still be the holder, in the state read: one that finished meanwhile stays finished.
  if (record.token) changes.when`${attr('token')} = ${record.token}`;
  else changes.when`attribute_not_exists(${attr('token')})`;
  try {
    const out = await updateItem(key(accountId, idempotencyKey), changes, 'ALL_NEW', undefined, { oldOnFailure: true });
    return parseItem(recordItem, out);
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    const old = oldItemOf(error);
    // Our own update, retried by the SDK after its answer was lost.
    if (old && old.token === token) return parseItem(recordItem, old);
    return undefined;
  }
}

/**
 * Transaction part: records a step of the request as committed, in the same
 * transaction as the step's writes, only while this attempt holds the key
 * and only once. Its condition failing means either that the step is
 * already recorded (the transaction itself was retried after its answer was
 * lost) or that another attempt took the key over: `stepRecorded` tells which.
 */
export const journalStep = (hold: Hold, name: string, value: unknown): TransactItem =>
  txUpdate(
    key(hold.accountId, hold.idempotencyKey),
    update().set`steps.${attr(name)} = ${value}`.when`${attr('token')} = ${hold.token} AND attribute_not_exists(steps.${attr(name)})`,
  );

/** After a transaction with `journalStep` was cancelled on it: whether the step is recorded under this attempt's hold. */
export async function stepRecorded(hold: Hold, name: string): Promise<boolean> {
  const item = await getItem(key(hold.accountId, hold.idempotencyKey), true);
  if (!item) return false;
  const record = parseItem(recordItem, item);
  return record.token === hold.token && name in record.steps;
}

/** Runs a write that ends the hold, a few times over transient failures; false when it could not be written (or the hold was lost). */
async function finishWrite(write: () => Promise<unknown>): Promise<boolean> {
  for (let attempt = 0; attempt < FINISH_TRIES; attempt++) {
    if (attempt > 0) await backoff(attempt);
    try {
      await write();
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
    }
  }
  return false;
}

/**
 * Records the answer. Retried like the work; the steps are dropped, as the
 * answer now stands for them. Resolves to whether it was recorded.
 */
export const completeIdempotencyKey = (hold: Hold, response: StoredResponse) =>
  finishWrite(() =>
    updateItem(
      key(hold.accountId, hold.idempotencyKey),
      update().set`${attr('status')} = ${'completed'}, ${attr('response')} = ${response}`.remove`steps`
        .when`${attr('token')} = ${hold.token}`,
    ).catch(reraiseUnlessOwnRetry(hold, 'completed')),
  );

/**
 * The request failed where its writes may have happened (a timeout, a lost
 * connection, a 5xx): the record stays, with its generation and steps, and a
 * retry takes it over at once instead of waiting for the lease.
 */
export const interruptIdempotencyKey = (hold: Hold) =>
  finishWrite(() =>
    updateItem(
      key(hold.accountId, hold.idempotencyKey),
      update().set`${attr('status')} = ${'interrupted'}`.when`${attr('token')} = ${hold.token}`,
    ).catch(reraiseUnlessOwnRetry(hold, 'interrupted')),
  );

/** A failure known to come before any write of the request releases the key, so a retry runs afresh. */
export const releaseIdempotencyKey = (hold: Hold) =>
  finishWrite(() =>
    deleteItem(key(hold.accountId, hold.idempotencyKey), condition`${attr('token')} = ${hold.token}`).catch(
      reraiseUnlessOwnRetry(hold, undefined),
    ),
  );

/**
 * A conditional failure on a write the SDK retried after its answer was lost
 * can be our own write having landed: look, and count it as done if so.
 */
const reraiseUnlessOwnRetry = (hold: Hold, status: RecordItem['status'] | undefined) => async (error: unknown) => {
  if (!isConditionFailure(error)) throw error;
  const item = await getItem(key(hold.accountId, hold.idempotencyKey), true);
  const landed = status === undefined ? !item || item.token !== hold.token : item?.token === hold.token && item.status === status;
  if (!landed) throw error;
};
