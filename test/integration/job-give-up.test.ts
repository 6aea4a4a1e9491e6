import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { advanceJob } from '#shared/data/jobs';
import { transactWrite } from '#shared/db/batch';
import { MAX_FAILED_RUNS, type JobKind } from '#shared/jobs/kind';
import { jobPut, messageOf, newJob } from '#shared/jobs/run';
import { jobWorker } from '#shared/jobs/worker';
import { aTenant } from '../steps/given.ts';
import { jobEvent, jobOf } from '../steps/jobs.ts';

/**
 * A job whose runs keep failing (not a refusal its step turns into an
 * outcome, but a throw every time) must not be retried without end when its
 * kind can end in an error its owner sees: after MAX_FAILED_RUNS failed runs
 * in a row it is given up. Run here through the real job worker and records
 * on DynamoDB Local, with a kind whose step throws.
 */
describe('a job whose runs keep failing', () => {
  /** A kind whose step throws until `fixed`, recording what it was told on giving up (or none, `giveUp: false`). */
  function failingKind(options: { giveUp: boolean }) {
    const state = { fixed: false, givenUp: [] as unknown[], runs: 0 };
    const kind: JobKind<{ n: string }> = {
      // A name the worker's message schema takes; the kind itself is this test's.
      name: 'list-import',
      payload: v.object({ n: v.string() }),
      subject: (p) => `TEST#${p.n}`,
      step: async () => {
        state.runs++;
        if (!state.fixed) throw new Error('the step failed');
        return { done: true };
      },
      ...(options.giveUp ? { giveUp: async (_job, error) => void state.givenUp.push(error) } : {}),
    };
    return { kind, state };
  }

  async function recorded(kind: JobKind<{ n: string }>) {
    const job = newJob(kind, (await aTenant()).accountId, { n: `${Date.now()}-${Math.random()}` });
    await transactWrite({ TransactItems: [jobPut(job)] });
    return job;
  }

  it('is given up, and its record finished, on its MAX_FAILED_RUNS-th failed run in a row, not before', async () => {
    // Given a job of a kind that can give up, whose step always throws
    const { kind, state } = failingKind({ giveUp: true });
    const job = await recorded(kind);
    const run = jobWorker([kind]);
    // When the worker runs it one time fewer than the limit
    for (let i = 1; i < MAX_FAILED_RUNS; i++) expect((await run(jobEvent(messageOf(job)))).batchItemFailures).toHaveLength(1);
    // Then it is still pending, to be retried, and nobody was told
    expect(state.givenUp).toEqual([]);
    expect(await jobOf(job)).toMatchObject({ pending: true });
    // When it fails once more
    const last = await run(jobEvent(messageOf(job)));
    // Then the kind is told once, with the error, the message is not redelivered, and the job is finished
    expect(last.batchItemFailures).toEqual([]);
    expect(state.givenUp).toHaveLength(1);
    expect((state.givenUp[0] as Error).message).toBe('the step failed');
    expect(await jobOf(job)).toBeUndefined();
    expect(state.runs).toBe(MAX_FAILED_RUNS);
  });

  it('counts failures in a row: recorded progress starts the count again', async () => {
    // Given a job that failed one run short of the limit
    const { kind, state } = failingKind({ giveUp: true });
    const job = await recorded(kind);
    const run = jobWorker([kind]);
    for (let i = 1; i < MAX_FAILED_RUNS; i++) await run(jobEvent(messageOf(job)));
    // When a run records progress before the next failures
    expect(await advanceJob(job, job.chain, 1)).toBe(true);
    for (let i = 1; i < MAX_FAILED_RUNS; i++) await run(jobEvent(messageOf(job)));
    // Then it is not given up; it finishes once its step works again
    expect(state.givenUp).toEqual([]);
    expect(await jobOf(job)).toMatchObject({ pending: true });
    state.fixed = true;
    expect((await run(jobEvent(messageOf(job)))).batchItemFailures).toEqual([]);
    expect(await jobOf(job)).toBeUndefined();
  });

  it('is retried for as long as it fails when its kind has no giveUp (a purge, a delivery)', async () => {
    // Given a job of a kind that must happen, whose step always throws
    const { kind, state } = failingKind({ giveUp: false });
    const job = await recorded(kind);
    const run = jobWorker([kind]);
    // When it fails twice the limit
    for (let i = 0; i < 2 * MAX_FAILED_RUNS; i++) expect((await run(jobEvent(messageOf(job)))).batchItemFailures).toHaveLength(1);
    // Then it is still pending, and finishes when its step works again
    expect(await jobOf(job)).toMatchObject({ pending: true });
    state.fixed = true;
    await run(jobEvent(messageOf(job)));
    expect(await jobOf(job)).toBeUndefined();
  });
});
