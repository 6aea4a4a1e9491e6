import * as v from 'valibot';
import { claimDeletion, deleteFileRecord, dueUnattachedFiles, releaseParts, releaseRef } from '#shared/data/files';
import type { NamedItems } from '#shared/db/batch';
import { objectKey } from '#shared/files/files';
import { deleteObject } from '#shared/files/storage';
import type { Job, JobKind } from '#shared/jobs/kind';
import { jobPut, newJob, startJob } from '#shared/jobs/run';
import { inParallel } from '#shared/util/parallel';
import { countMetric } from '#shared/util/metrics';

/**
 * Deletes a file nothing attaches any more: marked `deleting` first (a
 * message attaching it from then fails), then its object, then its record.
 * Each step may run again after a crash; a file attached again in between
 * is left alone.
 */
export async function deleteUnattached(accountId: string, fileId: string): Promise<void> {
  if (!(await claimDeletion(accountId, fileId))) return;
  try {
    await deleteObject(objectKey(accountId, fileId));
  } catch (error) {
    countMetric('fileCleanupFailed');
    countMetric('attentionNeeded');
    throw error;
  }
  await deleteFileRecord(accountId, fileId);
}

/** A message let a file go: the job that deletes it if that was its last message. */
export const fileRelease: JobKind<{ fileId: string }> = {
  name: 'file-release',
  payload: /* @__PURE__ */ (() => v.object({ fileId: v.string() }))(),
  subject: (p) => `FILE#${p.fileId}`,
  async step(job) {
    await deleteUnattached(job.accountId, job.payload.fileId);
    return { done: true };
  },
};

/** How long a request works on its releases before the purge queue takes the rest. */
const INLINE_MS = 5_000;

export interface Releases {
  /** Transaction parts: each file loses the message, and a job to delete it is recorded. */
  parts: NamedItems;
  /** Run after the commit. */
  start: () => Promise<void>;
}

/** A message lets `fileIds` go (deleted, or its attachments removed), in the transaction of that change. */
export function releaseFiles(accountId: string, fileIds: string[], messageId: string): Releases {
  const jobs: Job<{ fileId: string }>[] = fileIds.map((fileId) => newJob(fileRelease, accountId, { fileId }));
  return {
    parts: [
      ...releaseParts(accountId, fileIds, messageId),
      ...jobs.map((job): [string, ReturnType<typeof jobPut>] => [`job:${job.subject}`, jobPut(job)]),
    ],
    start: async () => {
      const deadline = Date.now() + INLINE_MS;
      await inParallel(jobs, 4, (job) => startJob(fileRelease, job, deadline));
    },
  };
}

/**
 * Messages no participant can read any more let their files go now: for a
 * purge's step, which runs again after a crash (each part is idempotent).
 */
export async function releaseUnread(accountId: string, filesByMessage: ReadonlyMap<string, string[]>): Promise<void> {
  const pairs = [...filesByMessage].flatMap(([messageId, files]) => files.map((fileId) => ({ messageId, fileId })));
  await inParallel(pairs, 4, async ({ messageId, fileId }) => {
    await releaseRef(accountId, fileId, messageId);
    await deleteUnattached(accountId, fileId);
  });
}

/** The sweeper's pass: uploads never attached whose 24 h are up (on AWS the bucket's lifecycle rule deletes their objects too). */
export async function sweepUnattachedFiles(): Promise<number> {
  const due = await dueUnattachedFiles(Date.now());
  await inParallel(due, 4, (f) => deleteUnattached(f.accountId, f.id));
  return due.length;
}
