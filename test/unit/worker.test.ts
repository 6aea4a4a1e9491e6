import type { SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { worker } from '#shared/util/worker';

const record = (messageId: string, body: string, receives = 1) =>
  ({ messageId, body, attributes: { ApproximateReceiveCount: String(receives) } }) as unknown as SQSEvent['Records'][number];

describe('worker(): the wrapper of SQS-fed functions', () => {
  it('reports only the failing records, drops malformed ones, and tells the last attempt', async () => {
    // Given a worker whose handler fails on "boom", asks to retry "later", and records what it saw
    const seen: string[] = [];
    const handler = worker({
      what: 'test job',
      parse: (body) => (body.startsWith('{') ? (JSON.parse(body) as { name: string }) : undefined),
      maxReceiveCount: 3,
      setup: () => ({ invocations: 0 }),
      each: async (job, delivery, state) => {
        state.invocations++;
        seen.push(`${job.name}:${delivery.lastAttempt}:${state.invocations}`);
        if (job.name === 'boom') throw new Error('boom');
        if (job.name === 'later') delivery.retryLater();
        return job.name;
      },
      // And whose batch step fails the result named "batch"
      after: async (results) => results.filter((r) => r.result === 'batch').map((r) => r.messageId),
    });
    // When a batch mixes good, failing, malformed, retried and last-attempt records
    const out = await handler({
      Records: [
        record('1', '{"name":"ok"}'),
        record('2', '{"name":"boom"}'),
        record('3', 'not json'),
        record('4', '{"name":"later"}'),
        record('5', '{"name":"batch"}', 3),
      ],
    });
    // Then exactly the failing, retried and batch-failed records come back; the malformed one is dropped
    expect(out.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(['2', '4', '5']);
    // And the handler saw the last attempt only on the third receive, with one state for the invocation
    expect(seen).toEqual(['ok:false:1', 'boom:false:2', 'later:false:3', 'batch:true:4']);
  });
});
