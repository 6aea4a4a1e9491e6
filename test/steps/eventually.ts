import { inspect } from 'node:util';

/** What a check answers while its condition does not hold yet. */
type NotYet = undefined | null | false | 0 | '';

export interface EventuallyOptions {
  /** What is waited for, in words: the error of a timeout starts with it. */
  what: string;
  /** Generous by default: the machine running the tests may be slow and busy. */
  timeoutMs?: number;
  /** Pause between two runs of the check. */
  intervalMs?: number;
}

const DEFAULT_TIMEOUT_MS = 20_000;
const DEFAULT_INTERVAL_MS = 100;

/**
 * The one way a test waits for something asynchronous: runs `check` until it
 * answers a truthy value, and resolves to that value. A check that throws
 * (an `expect` inside it, a call that fails for now) or answers a falsy
 * value is run again after `intervalMs`. Past `timeoutMs` it throws an
 * error naming `what`, with the last error the check threw (as the cause
 * too) or its last answer.
 *
 * It waits for a thing to happen, never for one not to: to show that
 * something did not happen, wait for a later event that must come after it
 * (a sentinel), then look.
 */
export async function eventually<T>(check: () => T | NotYet | Promise<T | NotYet>, options: EventuallyOptions): Promise<T> {
  const { what, timeoutMs = DEFAULT_TIMEOUT_MS, intervalMs = DEFAULT_INTERVAL_MS } = options;
  const deadline = Date.now() + timeoutMs;
  let tries = 0;
  let last: { error: unknown } | { answer: unknown };
  for (;;) {
    tries++;
    try {
      const answer = await check();
      if (answer) return answer;
      last = { answer };
    } catch (error) {
      last = { error };
    }
    if (Date.now() >= deadline) {
      const why =
        'error' in last
          ? `its last try threw: ${last.error instanceof Error ? last.error.message : inspect(last.error)}`
          : `its last try answered ${inspect(last.answer, { depth: 2 })}`;
      throw new Error(`${what}: not within ${timeoutMs} ms (${tries} tries); ${why}`, 'error' in last ? { cause: last.error } : undefined);
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(intervalMs, Math.max(0, deadline - Date.now()))));
  }
}
