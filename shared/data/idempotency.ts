import { createHash } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#shared/db/client';
import { keys } from '#shared/db/keys';
import { isConditionFailure } from '#shared/data/errors';
import { nowSeconds } from '#shared/util/ids';

/** Replays are honoured for 24 h; the TTL attribute lets DynamoDB drop old records. */
export const IDEMPOTENCY_WINDOW_SECONDS = 24 * 60 * 60;
/** A request still "in progress" after this long is assumed crashed and may be retried. */
const IN_PROGRESS_LEASE_SECONDS = 60;

export interface StoredResponse {
  statusCode: number;
  body: string;
}

export type Claim =
  | { kind: 'claimed' }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'in_progress' }
  | { kind: 'mismatch' };

const hash = (value: string) => createHash('sha256').update(value).digest('hex');
const key = (accountId: string, idempotencyKey: string) => keys.idempotency(accountId, hash(idempotencyKey));

/** Claims the key for this request, or tells what the earlier request with it did. */
export async function claimIdempotencyKey(accountId: string, idempotencyKey: string, fingerprint: string, attempt = 0): Promise<Claim> {
  const now = nowSeconds();
  try {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: {
          ...key(accountId, idempotencyKey),
          status: 'in_progress',
          fingerprint: hash(fingerprint),
          lease_until: now + IN_PROGRESS_LEASE_SECONDS,
          expires_at: now + IDEMPOTENCY_WINDOW_SECONDS,
        },
        // Expired records may linger until TTL deletion runs: treat them as absent.
        ConditionExpression: 'attribute_not_exists(pk) OR expires_at < :now OR (#s = :running AND lease_until < :now)',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':now': now, ':running': 'in_progress' },
      }),
    );
    return { kind: 'claimed' };
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
  const out = await db().send(
    new GetCommand({ TableName: tableName(), Key: key(accountId, idempotencyKey), ConsistentRead: true }),
  );
  const record = out.Item;
  // Released (or expired) between the two calls: claim again, a bounded number of times.
  if (!record) {
    if (attempt >= 3) return { kind: 'in_progress' };
    return claimIdempotencyKey(accountId, idempotencyKey, fingerprint, attempt + 1);
  }
  if (record.fingerprint !== hash(fingerprint)) return { kind: 'mismatch' };
  if (record.status === 'in_progress') return { kind: 'in_progress' };
  return { kind: 'replay', response: record.response as StoredResponse };
}

export async function completeIdempotencyKey(accountId: string, idempotencyKey: string, response: StoredResponse) {
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: key(accountId, idempotencyKey),
      UpdateExpression: 'SET #s = :done, #r = :response',
      ExpressionAttributeNames: { '#s': 'status', '#r': 'response' },
      ExpressionAttributeValues: { ':done': 'completed', ':response': response },
    }),
  );
}

/** A failed request releases its key so the client can retry with it. */
export async function releaseIdempotencyKey(accountId: string, idempotencyKey: string) {
  await db().send(new DeleteCommand({ TableName: tableName(), Key: key(accountId, idempotencyKey) }));
}
