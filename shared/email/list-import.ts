import * as v from 'valibot';
import { importSubject, type ImportPayload } from '#shared/email/imports';
import type { JobKind } from '#shared/jobs/kind';

/**
 * The `list-import` job. Its run (shared/email/import-job.ts: the CSV reader,
 * the syntax check, adding to the list) is imported by the first import the
 * worker runs: with csv-parse, which it loads on first read, it was 54 KiB
 * of the purge worker's init, whose cold starts mostly run other jobs
 * (docs/performance.md, Cold start). The kind is a module of its own so
 * that the API's import routes, which only queue the job, carry no chunk of
 * its run.
 */
export const listImport: JobKind<ImportPayload> = {
  name: 'list-import',
  payload: /* @__PURE__ */ (() => v.object({ listId: v.pipe(v.number(), v.safeInteger()), importId: v.string() }))(),
  subject: (p) => importSubject(p.importId),
  step: async (job, deadline) => (await import('#shared/email/import-job')).importStep(job, deadline),
  giveUp: async (job) => (await import('#shared/email/import-job')).abandonImport(job),
};
