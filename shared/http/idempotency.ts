import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  interruptIdempotencyKey,
  releaseIdempotencyKey,
  type Hold,
} from '#shared/data/idempotency';
import type { Principal } from '#shared/data/tokens';
import { conflict, DomainError } from '#shared/errors';
import { badRequest, unprocessable } from '#shared/http/errors';
import { header } from '#shared/http/middleware';
import { describeError, logger } from '#shared/util/logger';

/**
 * What a key's first request is compared with: method, path, body, and the
 * user who sent it. Keys are the account's (two users of an account share
 * them, as the contract scopes them); a second user's request under a key
 * another user took differs from it, so it answers 422 and never replays
 * what was answered to someone else.
 */
export const fingerprintOf = (method: string, path: string, principal: Principal | undefined, body: unknown) =>
  JSON.stringify([method, path, ...(principal ? [principal.contactId] : []), body]);

/** How an endpoint honours the Idempotency-Key header (`idempotent` in its spec). */
export interface Idempotency {
  run(
    request: { event: APIGatewayProxyEvent; accountId: string; principal: Principal | undefined; body: unknown },
    execute: (hold?: Hold) => Promise<APIGatewayProxyResult>,
    secretFields: readonly string[] | undefined,
  ): Promise<APIGatewayProxyResult>;
}

/**
 * An endpoint that honours the Idempotency-Key header (the creates). Given
 * in the endpoint's spec rather than as a flag, so that only these
 * endpoints' bundles carry this module and the idempotency records' data
 * layer (docs/performance.md, Cold start).
 */
export const idempotent = (): Idempotency => ({
  run({ event, accountId, principal, body }, execute, secretFields) {
    const key = header(event, 'idempotency-key');
    if (key === undefined) return execute();
    if (key.length === 0 || key.length > 255) {
      throw badRequest('Idempotency-Key must be 1 to 255 characters', 'Idempotency-Key');
    }
    return withIdempotency(accountId, key, fingerprintOf(event.httpMethod, event.path, principal, body), execute, secretFields);
  },
});

/**
 * Runs `execute` once per (account, key): a replay within the window gets the
 * first response back, a different request under the same key a 422, and a
 * replay while the first is still running a 409.
 *
 * A request that failed where its writes may have happened (any error but a
 * refusal of the domain made before any step was recorded) keeps its key,
 * marked interrupted: the retry takes it over and continues the same request
 * (`Hold`), so what the first attempt committed is met, not done twice.
 */
export async function withIdempotency(
  accountId: string,
  key: string,
  fingerprint: string,
  execute: (hold: Hold) => Promise<APIGatewayProxyResult>,
  /** Top-level fields of the answer that hold a credential: stored sealed to this record, opened for a replay. */
  secretFields: readonly string[] = [],
): Promise<APIGatewayProxyResult> {
  const sealedTo = { replay: `${accountId}/${key}` };
  const claim = await claimIdempotencyKey(accountId, key, fingerprint);
  if (claim.kind === 'mismatch') {
    throw unprocessable(
      'Idempotency-Key was already used with different parameters, or by another user of the account',
      'idempotency_key_reused',
    );
  }
  if (claim.kind === 'in_progress') {
    throw conflict('A request with this Idempotency-Key is still in progress', 'idempotency_key_in_use');
  }
  if (claim.kind === 'replay') {
    return {
      statusCode: claim.response.statusCode,
      headers: { 'Content-Type': 'application/json', 'Idempotent-Replayed': 'true' },
      body: await withFields(claim.response.body, secretFields, async (sealed) => (await sealing()).open(sealed, sealedTo)),
    };
  }
  const { hold } = claim;
  let response: APIGatewayProxyResult;
  try {
    response = await execute(hold);
  } catch (error) {
    // A domain refusal (404, 400, ...) is decided on reads or on a cancelled transaction: nothing was written.
    const refusedBeforeWrites = error instanceof DomainError && !hold.resumed && Object.keys(hold.steps).length === 0;
    const freed = await (refusedBeforeWrites ? releaseIdempotencyKey(hold) : interruptIdempotencyKey(hold));
    if (!freed) logger.warn('the idempotency key stays held until its lease ends', describeError(error));
    throw error;
  }
  // The work is done: its answer goes to the client even when it cannot be recorded (a retry then continues the request).
  // Unrecorded, it is marked interrupted if that still can be: a retry then continues the request and answers the same.
  const stored = await withFields(response.body, secretFields, async (secret) => (await sealing()).seal(secret, sealedTo)).catch(
    (error: unknown) => {
      logger.warn('could not seal the answer of an idempotent request', describeError(error));
      return undefined;
    },
  );
  if (stored === undefined || !(await completeIdempotencyKey(hold, { statusCode: response.statusCode, body: stored }))) {
    const freed = await interruptIdempotencyKey(hold);
    logger.warn('could not record the answer of an idempotent request', { key_released_for_retry: freed });
  }
  return response;
}

/** Imported by the first answer with a credential in it: of the creates, only a token's and a webhook endpoint's have one. */
const sealing = () => import('#shared/util/sealing');

/**
 * The JSON body with each of these top-level fields, where present as a
 * string, passed through `change` (sealed to be stored, opened to be
 * replayed); unchanged when there are none, so its key order is the first
 * answer's.
 */
async function withFields(body: string, fields: readonly string[], change: (value: string) => Promise<string>): Promise<string> {
  if (fields.length === 0) return body;
  const parsed = JSON.parse(body) as Record<string, unknown>;
  for (const field of fields) {
    const value = parsed[field];
    if (typeof value === 'string') parsed[field] = await change(value);
  }
  return JSON.stringify(parsed);
}
