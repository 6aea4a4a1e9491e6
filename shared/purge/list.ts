import * as v from 'valibot';
import { listEmailKeys } from '#shared/data/email-deletes';
import { listExports } from '#shared/data/exports';
import { exportObjectKey } from '#shared/email/export-job';
import { deleteObject } from '#shared/files/storage';
import { BATCH, batchPurge } from '#shared/purge/batches';
import { inParallel } from '#shared/util/parallel';

/** Files deleted at once by a pass over a list's exports. */
const FILE_DELETES_AT_ONCE = 10;

/**
 * A deleted email list's exports first, so that no download URL handed out
 * outlives the list by more than a pass: each export's file, then its record
 * (a pass that dies between the two finds the record again, and a file
 * already gone is no error). Then its emails and page index.
 */
export const purgeList = /* @__PURE__ */ batchPurge(
  'purge-list',
  v.object({ listId: v.pipe(v.number(), v.safeInteger()) }),
  (p) => `LIST#${p.listId}`,
  async (accountId, p) => {
    const exports = await listExports(accountId, p.listId, BATCH);
    if (exports.length === 0) return listEmailKeys(accountId, p.listId, BATCH);
    await inParallel(exports, FILE_DELETES_AT_ONCE, (e) => deleteObject(exportObjectKey(accountId, e.id)));
    return exports.map((e) => e.key);
  },
);
