import type { Context } from 'aws-lambda';
import { withInvocationLogger } from '#shared/util/logger';
import { flushMetrics } from '#shared/util/metrics';

/**
 * Wraps every Lambda handler: the invocation logs through its own logger
 * (its Lambda context and request id on every line, even when invocations
 * interleave in one process) and prints its metrics once when it ends,
 * whether it succeeded or threw.
 */
export function instrumented<A extends [event?: unknown, context?: Context], R>(handler: (...args: A) => Promise<R>) {
  return (...args: A): Promise<R> => withInvocationLogger(args[1], () => handler(...args)).finally(flushMetrics);
}
