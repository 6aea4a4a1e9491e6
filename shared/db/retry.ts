import { cancellationCodes } from '#shared/db/errors';

/** Tries in all (the first and its retries) unless a caller says otherwise. */
const MAX_TRIES = 5;

/** Returned by an attempt whose condition failed on what it read: read again and retry. */
export const AGAIN: unique symbol = Symbol('again');

/** Jittered exponential wait before retry `attempt` (1, 2, …), at most one second. */
export const backoff = (attempt: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.min(1000, 25 * 2 ** attempt) * Math.random()));

/**
 * A transaction DynamoDB cancelled only because another one touched the same
 * items, or a single-item write refused because a transaction held its item
 * (TransactionConflictException): nothing of it was done.
 */
export function isTransactionConflict(error: unknown): boolean {
  if ((error as { name?: string } | undefined)?.name === 'TransactionConflictException') return true;
  const codes = cancellationCodes(error);
  return (
    codes?.includes('TransactionConflict') === true && codes.every((c) => c === 'TransactionConflict' || c === 'None' || c === undefined)
  );
}

export interface RetryOptions<T> {
  tries?: number;
  /** The answer once every try met a conflict; without it the last conflict is thrown. */
  exhausted?: () => T;
}

/**
 * The one retry policy for contended writes: runs `attempt` again when it
 * answers AGAIN (an optimistic write whose condition failed on a stale read)
 * or throws a TransactionConflict, at most `tries` times in all, with a
 * capped, jittered backoff between tries. Any other error propagates at once.
 */
export async function retryOnConflict<T>(attempt: (index: number) => Promise<T | typeof AGAIN>, options: RetryOptions<T> = {}): Promise<T> {
  const tries = options.tries ?? MAX_TRIES;
  let conflict: unknown = new Error(`still conflicting after ${tries} tries`);
  for (let index = 0; index < tries; index++) {
    if (index > 0) await backoff(index);
    try {
      const result = await attempt(index);
      if (result !== AGAIN) return result;
    } catch (error) {
      if (!isTransactionConflict(error)) throw error;
      conflict = error;
    }
  }
  if (options.exhausted) return options.exhausted();
  throw conflict;
}
