import * as v from 'valibot';
import { listEmailKeys } from '#shared/data/email-deletes';
import { BATCH, batchPurge } from '#shared/purge/batches';

/** A deleted email list's emails and page index. */
export const purgeList = /* @__PURE__ */ batchPurge(
  'purge-list',
  v.object({ listId: v.pipe(v.number(), v.safeInteger()) }),
  (p) => `LIST#${p.listId}`,
  (accountId, p) => listEmailKeys(accountId, p.listId, BATCH),
);
