import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { DEFAULT_TIMEOUT_SECONDS, MEMORY_MB, type ApiName } from '#shared/routes';
import { withQueueGrants } from './queue-grants.ts';

/** Loads `functions/<handler>.ts` the way Lambda loads a bundle: once, then reused. */
const modules = new Map<string, Promise<{ handler: (...args: unknown[]) => Promise<unknown> }>>();

export function loadHandler(handler: string) {
  let loaded = modules.get(handler);
  if (!loaded) {
    loaded = import(new URL(`../../functions/${handler}.ts`, import.meta.url).href);
    modules.set(handler, loaded);
  }
  return loaded.then((m) => m.handler);
}

/**
 * On Lambda each concurrent invocation has a container of its own; here they
 * share this process, so dozens started at once on a busy machine wait for
 * one another. A test of contention may stretch every deadline by
 * LOCAL_TIMEOUT_FACTOR (default 1) so that it checks the contention, not the
 * host's speed.
 */
const timeoutFactor = () => Math.max(1, Number(process.env.LOCAL_TIMEOUT_FACTOR) || 1);

/** The slice of Lambda's context object the handlers use. */
export function lambdaContext(functionName: string, timeoutSeconds: number): Context {
  const deadline = Date.now() + timeoutSeconds * 1000 * timeoutFactor();
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: String(MEMORY_MB),
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

export async function invoke<T>(handler: string, event: unknown, timeoutSeconds = DEFAULT_TIMEOUT_SECONDS): Promise<T> {
  const fn = await loadHandler(handler);
  return (await withQueueGrants(handler, () => fn(event, lambdaContext(handler.replaceAll('/', '-'), timeoutSeconds)))) as T;
}

/** A function of the stack, named by its source handler (and the API it serves: each API has its own authorizer and fallback). */
export interface FunctionRef {
  handler: string;
  api?: ApiName;
}

/** Runs a function: by default the source under functions/; a test may run the bundles `cdk synth` wrote instead. */
export type Invoker = (fn: FunctionRef, event: unknown, timeoutSeconds: number) => Promise<unknown>;

export const invokeSource: Invoker = (fn, event, timeoutSeconds) => invoke(fn.handler, event, timeoutSeconds);
