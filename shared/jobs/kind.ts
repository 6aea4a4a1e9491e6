import type * as v from 'valibot';
import type { JobName } from '#shared/jobs/names';

/** A job as a run holds it: its record, and the chain of runs the run belongs to. */
export interface Job<P> {
  readonly kind: JobName;
  readonly accountId: string;
  /** What it works on (`MSG#<msg>`, `CONV#<conv>`, ...): its record's key. */
  readonly subject: string;
  readonly payload: P;
  /** The kind's own measure of progress, as last recorded. */
  cursor: number;
  readonly createdMs: number;
  readonly chain: string;
}

/** What one step did: whether the job is done, and the progress to record (kinds that find their work again from the table record none). */
export interface Step {
  done: boolean;
  cursor?: number;
  /** Not done, and nothing to do before then (epoch ms): the job is let go, due again at that time (what it waits for is elsewhere). */
  againAtMs?: number;
}

/**
 * One kind of durable job: a small module with a schema for its payload
 * (checked when a worker reads the record) and a `step` that does one
 * bounded, repeatable piece of the work. A step may run twice (a run that
 * died after the step but before recording it), so each must change
 * nothing the second time.
 */
export interface JobKind<P> {
  name: JobName;
  payload: v.GenericSchema<unknown, P>;
  /** The record's subject: one record per subject, so a second job of it takes the first's record over. */
  subject(payload: P): string;
  /** A finished job's record stays (off the pending index) for what reads it later; by default it is deleted. */
  keep?: boolean;
  /**
   * A job found done sooner than this after it started is let go until
   * then, and finished by a last pass: what its steps find through an
   * index (eventually consistent) may have lagged behind the commit.
   */
  settleMs?: number;
  step(job: Job<P>, deadline: number): Promise<Step>;
  /**
   * A job whose runs keep failing (MAX_FAILED_RUNS in a row, whichever chains
   * ran them) ends here, then is finished, instead of being retried without
   * end: for kinds whose work can end in an error its owner sees (an import
   * reports `error`). Without it a kind is retried until it succeeds (a
   * purge or a delivery must happen).
   */
  giveUp?(job: Job<P>, error: unknown): Promise<void>;
}

/** Failed runs in a row after which a job with `giveUp` gives up: with SQS's redeliveries and the sweeper's leases, some minutes of failing. */
export const MAX_FAILED_RUNS = 5;
