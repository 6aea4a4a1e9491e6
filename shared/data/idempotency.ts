import { createHash } from 'node:crypto';
import * as v from 'valibot';
import { parseItem } from '#shared/db/item-schema';
import { attr, condition, update } from '#shared/db/expression';
import { conditionHeld, deleteItem, getItem, putItem, updateItem } from '#shared/db/items';
import { keys } from '#shared/db/keys';
import { AGAIN, retryOnConflict } from '#shared/db/retry';
import { nowSeconds } from '#shared/util/ids';

/** Replays are honoured for 24 h; the TTL attribute lets DynamoDB drop old records. */
export const IDEMPOTENCY_WINDOW_SECONDS = 24 * 60 * 60;
/** A request still "in progress" after this long is assumed crashed and may be retried. */
const IN_PROGRESS_LEASE_SECONDS = 60;

export interface StoredResponse {
  statusCode: number;
  body: string;
}

export type Claim = { kind: 'claimed' } | { kind: 'replay'; response: StoredResponse } | { kind: 'in_progress' } | { kind: 'mismatch' };

const hash = (value: string) => createHash('sha256').update(value).digest('hex');
const key = (accountId: string, idempotencyKey: string) => keys.idempotency.key({ acct: accountId, key_hash: hash(idempotencyKey) });

// Built in a /* @__PURE__ */ call, so that esbuild drops it from functions that never read this item (shared/db/item-schema.ts).
const recordItem = /* @__PURE__ */ (() =>
  v.object({
    status: v.picklist(['in_progress', 'completed']),
    fingerprint: v.string(),
    response: v.optional(v.object({ statusCode: v.number(), body: v.string() })),
  }))();

/**
 * Claims the key for this request, or tells what the earlier request with it
 * did. A record released (or expired) between the claim and the read is
 * claimed again, a bounded number of times.
 */
export function claimIdempotencyKey(accountId: string, idempotencyKey: string, fingerprint: string): Promise<Claim> {
  return retryOnConflict(
    async () => {
      const now = nowSeconds();
      const claimed = await conditionHeld(
        putItem(
          {
            ...key(accountId, idempotencyKey),
            status: 'in_progress',
            fingerprint: hash(fingerprint),
            lease_until: now + IN_PROGRESS_LEASE_SECONDS,
            expires_at: now + IDEMPOTENCY_WINDOW_SECONDS,
          },
          // Expired records may linger until TTL deletion runs: treat them as absent.
          condition`attribute_not_exists(pk) OR expires_at < ${now} OR (${attr('status')} = ${'in_progress'} AND lease_until < ${now})`,
        ),
      );
      if (claimed) return { kind: 'claimed' } as const;
      const item = await getItem(key(accountId, idempotencyKey), true);
      if (!item) return AGAIN;
      const record = parseItem(recordItem, item);
      if (record.fingerprint !== hash(fingerprint)) return { kind: 'mismatch' } as const;
      if (record.status === 'in_progress') return { kind: 'in_progress' } as const;
      return { kind: 'replay', response: record.response! } as const;
    },
    { exhausted: () => ({ kind: 'in_progress' }) },
  );
}

export async function completeIdempotencyKey(accountId: string, idempotencyKey: string, response: StoredResponse) {
  await updateItem(key(accountId, idempotencyKey), update().set`${attr('status')} = ${'completed'}, ${attr('response')} = ${response}`);
}

/** A failed request releases its key so the client can retry with it. */
export async function releaseIdempotencyKey(accountId: string, idempotencyKey: string) {
  await deleteItem(key(accountId, idempotencyKey));
}
