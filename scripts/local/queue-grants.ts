import { AsyncLocalStorage } from 'node:async_hooks';
import { queues, queueUrlEnv } from '#shared/queues';
import { routes, schedules, streams, workers, type QueueName } from '#shared/routes';
import { sqsClient } from '#shared/util/sqs';

/**
 * The stack grants each function `sqs:SendMessage` on the queues its row
 * lists (`sends`) and gives it only their URLs. Here every function shares
 * one process and one environment, so a row missing a queue would go
 * unnoticed until the send failed on AWS; the process's SQS client therefore
 * refuses, during an invocation, a send to a queue the invoked function's row
 * does not list, as IAM would. Code run outside an invocation (tests calling
 * domain functions, the admin command line) is not checked.
 */
const grants = new Map<string, ReadonlySet<QueueName>>(
  [...routes, ...workers, ...streams, ...schedules].map((f) => [f.handler, new Set(f.sends ?? [])]),
);

const invocation = new AsyncLocalStorage<string>();
const denied: string[] = [];

function queueOf(url: string): QueueName | undefined {
  return (Object.keys(queues) as QueueName[]).find((q) => process.env[queueUrlEnv(q)] === url);
}

async function checkSends(): Promise<void> {
  const client = await sqsClient();
  client.middlewareStack.add(
    (next) => async (args) => {
      const handler = invocation.getStore();
      const url = (args.input as { QueueUrl?: string }).QueueUrl;
      const queue = url === undefined ? undefined : queueOf(url);
      if (handler !== undefined && queue !== undefined && !grants.get(handler)?.has(queue)) {
        const refusal = `${handler} sent to the ${queue} queue, which its row in shared/routes does not list in sends (on AWS: AccessDenied)`;
        denied.push(refusal);
        throw new Error(refusal);
      }
      return next(args);
    },
    { step: 'initialize', name: 'local-queue-grants' },
  );
}

let installed: Promise<void> | undefined;

/** Runs one invocation of `handler` with its queue grants checked (the check installed on the process's client once). */
export async function withQueueGrants<T>(handler: string, run: () => Promise<T>): Promise<T> {
  await (installed ??= checkSends());
  return invocation.run(handler, run);
}

/**
 * The sends refused so far in this process. A refused send is often retried
 * into success locally (a queue redelivers within seconds in tests, where on
 * AWS three refusals put the work in a dead-letter queue), so the tests fail
 * on this list rather than on what the retries hid.
 */
export const refusedSends = (): readonly string[] => denied;
