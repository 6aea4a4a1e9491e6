import * as v from 'valibot';
import { memberKeys } from '#shared/data/group-members';
import { BATCH, batchPurge } from '#shared/purge/batches';

/** A deleted group's member items. */
export const purgeGroup = /* @__PURE__ */ batchPurge(
  'purge-group',
  v.object({ groupId: v.string() }),
  (p) => `GROUP#${p.groupId}`,
  (accountId, p) => memberKeys(accountId, p.groupId, BATCH),
);
