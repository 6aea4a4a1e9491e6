import type { APIGatewayProxyResult } from 'aws-lambda';
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey } from '#shared/data/idempotency';
import type { Principal } from '#shared/data/tokens';
import { conflict } from '#shared/errors';
import { unprocessable } from '#shared/http/errors';

/** A key as one user of the account holds it: other users' equal keys are other keys. */
export const userScopedKey = (principal: Principal, key: string) => `${principal.contactId}\n${key}`;

/**
 * Runs `execute` once per (account, key): a replay within the window gets the
 * first response back, a different request under the same key a 422, and a
 * replay while the first is still running a 409.
 */
export async function withIdempotency(
  accountId: string,
  key: string,
  fingerprint: string,
  execute: () => Promise<APIGatewayProxyResult>,
): Promise<APIGatewayProxyResult> {
  const claim = await claimIdempotencyKey(accountId, key, fingerprint);
  if (claim.kind === 'mismatch') {
    throw unprocessable('Idempotency-Key was already used with different parameters', 'idempotency_key_reused');
  }
  if (claim.kind === 'in_progress') {
    throw conflict('A request with this Idempotency-Key is still in progress', 'idempotency_key_in_use');
  }
  if (claim.kind === 'replay') {
    return {
      statusCode: claim.response.statusCode,
      headers: { 'Content-Type': 'application/json', 'Idempotent-Replayed': 'true' },
      body: claim.response.body,
    };
  }
  let response: APIGatewayProxyResult;
  try {
    response = await execute();
  } catch (error) {
    await releaseIdempotencyKey(accountId, key);
    throw error;
  }
  await completeIdempotencyKey(accountId, key, { statusCode: response.statusCode, body: response.body });
  return response;
}
