import { beforeEach, describe, expect, it, vi } from 'vitest';

/**
 * The sweeper runs four independent passes each minute; one that throws (a
 * bad record, a throttled read) must not stop the others. The jobs are
 * replaced by stand-ins here: what is under test is the sweeper's isolation.
 */
const jobs = vi.hoisted(() => ({
  recoverLostWork: vi.fn(),
  resumeAllAwaiting: vi.fn(),
  requeueDueJobs: vi.fn(),
  sweepUnattachedFiles: vi.fn(),
}));
vi.mock('#shared/email/outbox', () => ({
  recoverLostWork: jobs.recoverLostWork,
  resumeAllAwaiting: jobs.resumeAllAwaiting,
  STRANDED_AFTER_MS: 120_000,
}));
vi.mock('#shared/jobs/sweep', () => ({ requeueDueJobs: jobs.requeueDueJobs }));
vi.mock('#shared/files/release', () => ({ sweepUnattachedFiles: jobs.sweepUnattachedFiles }));

const { handler } = await import('#functions/workers/sweeper');

describe('the sweeper', () => {
  beforeEach(() => {
    jobs.recoverLostWork.mockResolvedValue({ settled: 1, requeued: 2 });
    jobs.resumeAllAwaiting.mockResolvedValue(undefined);
    jobs.requeueDueJobs.mockResolvedValue(3);
    jobs.sweepUnattachedFiles.mockResolvedValue(4);
  });

  it.each(Object.keys(jobs) as (keyof typeof jobs)[])('still runs every other job when %s throws', async (failing) => {
    // Given one job that fails
    jobs[failing].mockRejectedValue(new Error(`${failing} failed`));
    for (const job of Object.values(jobs)) job.mockClear();
    // When the sweeper runs
    const result = await handler();
    // Then each of them was run once, and the others' results are reported
    for (const job of Object.values(jobs)) expect(job).toHaveBeenCalledTimes(1);
    expect(result).toEqual({
      resent: failing === 'recoverLostWork' ? undefined : 1,
      requeued: failing === 'recoverLostWork' ? undefined : 2,
      jobs: failing === 'requeueDueJobs' ? undefined : 3,
      files: failing === 'sweepUnattachedFiles' ? undefined : 4,
    });
  });
});
