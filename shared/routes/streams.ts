import type { QueueName, TableAccess } from '#shared/routes/route';

/**
 * Consumers of the table's change stream: a DynamoDB event source mapping on
 * AWS (partial batch failures, bisect on error, a dead-letter queue for
 * records that keep failing), a poller of DynamoDB Local's stream locally.
 * `sortKeys` is the event filter: only changes of items with these sort keys
 * (exact, or by prefix) invoke the function.
 */
export interface StreamConsumer {
  name: string;
  handler: string;
  table: TableAccess;
  sends?: QueueName[];
  batchSize: number;
  timeoutSeconds: number;
  /** Attempts of a failing batch (after bisecting) before its records go to the dead-letter queue. */
  retryAttempts: number;
  /** Concurrent batches per shard (Lambda's ParallelizationFactor; changes of one item stay in order). */
  parallelization?: number;
  /** Posts to the realtime API's connections (its callback URL, execute-api:ManageConnections); absent where there is no WebSocket API. */
  realtime?: boolean;
  /**
   * Locally, poll an idle stream every 25 ms instead of 100 ms: for the
   * consumer whose latency a person watches (a chat client's frame). Lambda
   * itself polls a shard about four times a second.
   */
  latencySensitive?: boolean;
  sortKeys: { exact: readonly string[]; prefix: readonly string[] };
}

export const streams: readonly StreamConsumer[] = [
  {
    name: 'webhook-events',
    handler: 'workers/webhook-events',
    table: 'read',
    sends: ['webhooks'],
    batchSize: 100,
    timeoutSeconds: 60,
    retryAttempts: 10,
    // The items whose changes the account's view has events for (shared/stream/account.ts).
    sortKeys: { exact: ['CONV', 'LIST'], prefix: ['MSG#'] },
  },
  {
    name: 'realtime-events',
    handler: 'workers/realtime-events',
    // Deletes the connections API Gateway reports gone.
    table: 'readWrite',
    batchSize: 100,
    timeoutSeconds: 60,
    // A frame is worth sending only now: a batch that keeps failing is not held up long.
    retryAttempts: 2,
    // A 1,000-member send's records spread over several concurrent batches (docs/realtime.md).
    parallelization: 4,
    realtime: true,
    latencySensitive: true,
    // Conversations, thread messages (edits, reactions) and each participant's entry (delivery, reads: shared/stream/users.ts).
    sortKeys: { exact: ['CONV'], prefix: ['MSG#', '#MSG#'] },
  },
];
