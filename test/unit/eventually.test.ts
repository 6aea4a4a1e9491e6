import { describe, expect, it } from 'vitest';
import { eventually } from '../steps/eventually.ts';

const resolved = (): never => {
  throw new Error('resolved, where it should have timed out');
};

/** The tests' one polling helper: what it answers, and what its timeout says. */
describe('eventually', () => {
  it('runs the check until it answers a truthy value, through falsy answers and throws, and resolves to that value', async () => {
    // Given a check that answers nothing, then false, then throws, then a value
    const answers: (() => unknown)[] = [
      () => undefined,
      () => false,
      () => {
        throw new Error('not yet');
      },
      () => ({ done: true }),
    ];
    let tries = 0;
    // When it is waited for
    const value = await eventually(() => answers[tries++]!(), { what: 'the fourth answer', intervalMs: 1 });
    // Then it resolves to the value, after exactly four tries
    expect(value).toEqual({ done: true });
    expect(tries).toBe(4);
  });

  it('on timeout throws naming what it waited for and the last error, kept as the cause', async () => {
    const last = new Error('queue holds 1 message');
    const error = await eventually(
      () => {
        throw last;
      },
      { what: 'the queue empty', timeoutMs: 20, intervalMs: 1 },
    ).then(resolved, (e: Error) => e);
    expect(error.message).toMatch(/^the queue empty: not within 20 ms \(\d+ tries\); its last try threw: queue holds 1 message$/);
    expect(error.cause).toBe(last);
  });

  it('on timeout names the last answer when the check did not throw', async () => {
    const error = await eventually(() => 0, { what: 'a count', timeoutMs: 20, intervalMs: 1 }).then(resolved, (e: Error) => e);
    expect(error.message).toMatch(/^a count: not within 20 ms \(\d+ tries\); its last try answered 0$/);
    expect(error.cause).toBeUndefined();
  });
});
