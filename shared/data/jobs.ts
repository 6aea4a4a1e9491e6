import * as v from 'valibot';
import { txPut, type TransactItem } from '#shared/db/batch';
import { attr, condition, update } from '#shared/db/expression';
import { parseItem } from '#shared/db/item-schema';
import { conditionHeld, deleteItem, getItem, query, unlessConditionFails, updateItem, type Item, type KeyedItem } from '#shared/db/items';
import { keys } from '#shared/db/keys';

/**
 * The record of a durable job (shared/jobs/): what it works on, its
 * payload, how far it went, and which chain of runs holds it. While
 * unfinished it sits in the pending index under the time it is due: when
 * the holding chain's lease ends, or, released, when it should run again.
 * The sweeper takes up whatever is past due.
 */
export interface JobRecord {
  kind: string;
  accountId: string;
  /** What the job works on: the key's `<subject>`, the same for every run. */
  subject: string;
  payload: unknown;
  /** The kind's own measure of progress (a fan-out's recipients done); 0 at the start. */
  cursor: number;
  createdMs: number;
  /** The chain holding it, while one does. */
  holder?: string;
  /** Whether it is unfinished (in the pending index). */
  pending: boolean;
}

/** How long a chain holds a job after each claim or progress: longer than one hop (a worker run plus the queue's delivery). */
export const LEASE_MS = 3 * 60_000;

// Built in a /* @__PURE__ */ call, so that esbuild drops it from functions that never read this item (shared/db/item-schema.ts).
const storedJob = /* @__PURE__ */ (() =>
  v.object({
    kind: v.string(),
    account_id: v.string(),
    subject: v.string(),
    payload: v.unknown(),
    progress: v.number(),
    created_at_ms: v.number(),
    lease_owner: v.optional(v.string()),
    gsi2pk: v.optional(v.string()),
  }))();

function toRecord(item: Item): JobRecord {
  const r = parseItem(storedJob, item);
  return {
    kind: r.kind,
    accountId: r.account_id,
    subject: r.subject,
    payload: r.payload,
    cursor: r.progress,
    createdMs: r.created_at_ms,
    ...(r.lease_owner === undefined ? {} : { holder: r.lease_owner }),
    pending: r.gsi2pk !== undefined,
  };
}

type Ref = Pick<JobRecord, 'accountId' | 'subject'>;
const keyOf = (r: Ref) => keys.job.key({ acct: r.accountId, subject: r.subject });
const dueAt = (ms: number) => keys.pendingJobs.sortKey({ ms });
// `progress` rather than `cursor`, a DynamoDB reserved word; written through a placeholder all the same.
const progress = attr('progress');

type NewRecord = Omit<JobRecord, 'pending' | 'holder'>;

/**
 * A job's item: held by `chain` (its lease runs from the start), or due at
 * `dueMs` with no chain holding it, or, with neither, finished and kept.
 */
export function jobItem(r: NewRecord, state: { chain?: string; dueMs?: number }): KeyedItem {
  const leaseUntil = state.chain === undefined ? undefined : r.createdMs + LEASE_MS;
  const due = leaseUntil ?? state.dueMs;
  return {
    ...keyOf(r),
    ...(due === undefined ? {} : keys.pendingJobs.entry({ ms: due })),
    type: 'job',
    kind: r.kind,
    account_id: r.accountId,
    subject: r.subject,
    payload: r.payload,
    progress: r.cursor,
    created_at_ms: r.createdMs,
    ...(leaseUntil === undefined ? {} : { lease_owner: state.chain, lease_until: leaseUntil }),
  };
}

/**
 * Transaction part written with the change the job follows. The writing
 * chain holds it from the start: the request runs it inline without a
 * claim, and a new record (a retraction over its message's delivery)
 * takes it from any chain still working on the old one.
 */
export const jobRecordPut = (r: NewRecord, chain: string): TransactItem => txPut(jobItem(r, { chain }));

/**
 * Claims (or renews) an unfinished job for `chain` and reads it, in one
 * call: at most one chain works on a job at a time. Undefined when the job
 * is finished or another chain holds an unexpired lease.
 */
export async function claimJob(
  ref: Ref,
  chain: string,
  /** Also take it from a chain it was handed to whose message has not run yet (`handOverJob`): a client asked for it now. */
  options: { fromQueued?: boolean } = {},
): Promise<JobRecord | undefined> {
  const now = Date.now();
  const until = now + LEASE_MS;
  const claim = update().set`lease_owner = ${chain}, lease_until = ${until}, gsi2sk = ${dueAt(until)}`.remove`lease_queued`;
  if (options.fromQueued)
    claim.when`attribute_exists(gsi2pk) AND (attribute_not_exists(lease_until) OR lease_until < ${now} OR lease_owner = ${chain} OR lease_queued = ${true})`;
  else claim.when`attribute_exists(gsi2pk) AND (attribute_not_exists(lease_until) OR lease_until < ${now} OR lease_owner = ${chain})`;
  const item = await unlessConditionFails(updateItem(keyOf(ref), claim, 'ALL_NEW'));
  return item && toRecord(item);
}

/** Records progress and renews the lease; false when another chain took the job, or a run of the same chain is further on. */
export function advanceJob(ref: Ref, chain: string, cursor: number): Promise<boolean> {
  const until = Date.now() + LEASE_MS;
  return conditionHeld(
    updateItem(
      keyOf(ref),
      update().set`${progress} = ${cursor}, lease_until = ${until}, gsi2sk = ${dueAt(until)}`.remove`failed_runs`
        .when`lease_owner = ${chain} AND ${progress} < ${cursor}`,
    ),
  );
}

/**
 * Counts a run of `chain` that failed (a step threw); progress recorded
 * since the last failure starts the count again (`advanceJob`). The count,
 * or undefined when another chain holds the job now.
 */
export async function recordFailedRun(ref: Ref, chain: string): Promise<number | undefined> {
  const item = await unlessConditionFails(
    updateItem(keyOf(ref), update().add`failed_runs ${1}`.when`lease_owner = ${chain}`, 'UPDATED_NEW'),
  );
  return item && Number(item.failed_runs);
}

/** A finished job leaves the pending index and its record is deleted, or kept (`keep`) for what reads it later. */
export async function finishJob(ref: Ref, chain: string, keep: boolean): Promise<void> {
  if (keep) {
    await conditionHeld(
      updateItem(keyOf(ref), update().remove`gsi2pk, gsi2sk, lease_owner, lease_until, lease_queued`.when`lease_owner = ${chain}`),
    );
  } else {
    await conditionHeld(deleteItem(keyOf(ref), condition`lease_owner = ${chain}`));
  }
}

/** How long past its due time a job handed to a queued message waits for it before the sweeper may take it up. */
export const HANDOVER_SLACK_MS = 60_000;

/**
 * Hands a job from `chain` to `next`, whose message is queued for `dueMs`:
 * only `next` claims it until a minute after that, so no other chain (the
 * sweeper's, a late duplicate) starts beside it; the sweeper takes it up
 * only if that message never comes. False when `chain` no longer holds it.
 * Marked `lease_queued` until that message claims it: a client's request
 * may take it over sooner (`fromQueued`), as no run is under way.
 */
export function handOverJob(ref: Ref, chain: string, next: string, dueMs: number): Promise<boolean> {
  const until = dueMs + HANDOVER_SLACK_MS;
  return conditionHeld(
    updateItem(
      keyOf(ref),
      update().set`lease_owner = ${next}, lease_until = ${until}, gsi2sk = ${dueAt(until)}, lease_queued = ${true}`
        .when`lease_owner = ${chain}`,
    ),
  );
}

/** Lets a job go, due again at `dueMs`: the sweeper takes it up from then. */
export async function releaseJob(ref: Ref, chain: string, dueMs: number): Promise<void> {
  await conditionHeld(
    updateItem(
      keyOf(ref),
      update().set`gsi2sk = ${dueAt(dueMs)}`.remove`lease_owner, lease_until, lease_queued`.when`lease_owner = ${chain}`,
    ),
  );
}

/** A job's record, finished or not (a fan-out stays on record after its delivery). */
export async function getJob(ref: Ref): Promise<JobRecord | undefined> {
  const item = await getItem(keyOf(ref), true);
  return item && toRecord(item);
}

/**
 * Lets an unfinished job go from whatever chain held it, due now: only for
 * a restart of the one process that ran every chain (`npm start`), when
 * none of them lives on to end its lease.
 */
export async function releaseHeldJob(ref: Ref): Promise<void> {
  await conditionHeld(
    updateItem(
      keyOf(ref),
      update().set`gsi2sk = ${dueAt(Date.now())}`.remove`lease_owner, lease_until, lease_queued`.when`attribute_exists(gsi2pk)`,
    ),
  );
}

/** Unfinished jobs due before `nowMs` (no chain holds them), the longest overdue first. */
export async function dueJobs(nowMs: number, limit = 100): Promise<(Ref & { kind: string })[]> {
  const pending = keys.pendingJobs;
  const items = await query({ index: pending.index, partition: pending.partition(), sort: ['<', dueAt(nowMs)] }, limit, 1);
  return items.map((item) => ({ kind: String(item.kind), accountId: String(item.account_id), subject: String(item.subject) }));
}
