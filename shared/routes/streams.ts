import type { FileAccess, QueueName, TableAccess } from '#shared/routes/route';

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
  /** Uses the files bucket (FileAccess in shared/routes/route.ts). */
  files?: readonly FileAccess[];
  batchSize: number;
  timeoutSeconds: number;
  /** Attempts of a failing batch (after bisecting) before its records go to the dead-letter queue. */
  retryAttempts: number;
  /** Concurrent batches per shard (Lambda's ParallelizationFactor; changes of one item stay in order). */
  parallelization?: number;
  /** Posts to the realtime API's connections (its callback URL, execute-api:ManageConnections); absent where there is no WebSocket API. */
  realtime?: boolean;
  /**
   * Locally, an idle stream is polled every 250 ms instead of 500 ms (the
   * runtime's own writes wake the readers at once): for the consumer whose
   * latency a person watches (a chat client's frame), as changes written
   * by another process (the admin command line) go. Lambda itself polls a
   * shard about four times a second.
   */
  latencySensitive?: boolean;
  sortKeys: { exact: readonly string[]; prefix: readonly string[] };
  /**
   * Only inserts invoke the function (part of the filter too): the event
   * items it reads are written once, and their removals (the feeds' TTL,
   * a connection gone) would each cost an invocation that does nothing.
   */
  insertsOnly?: boolean;
}

export const streams: readonly StreamConsumer[] = [
  {
    name: 'event-feed',
    handler: 'workers/event-feed',
    // Appends to the events feeds; reads what an event presents (the message, its sender).
    table: 'readWrite',
    batchSize: 100,
    timeoutSeconds: 60,
    retryAttempts: 10,
    // One batch per shard at a time: appends to one feed (the account's above all) from concurrent batches would race for
    // each number (safe, shared/data/events.ts, but each loss costs a read and a retry).
    latencySensitive: true,
    // The items whose changes are events: conversations, lists, thread messages and each participant's entry (shared/stream/).
    sortKeys: { exact: ['CONV', 'LIST'], prefix: ['MSG#', '#MSG#'] },
  },
  {
    name: 'webhook-events',
    handler: 'workers/webhook-events',
    table: 'read',
    sends: ['webhooks'],
    batchSize: 100,
    timeoutSeconds: 60,
    retryAttempts: 10,
    // Events appended to an account's feed: a webhook's body is the feed's event.
    sortKeys: { exact: [], prefix: ['AEVT#'] },
    insertsOnly: true,
  },
  {
    name: 'realtime-events',
    handler: 'workers/realtime-events',
    // Deletes the connections API Gateway reports gone; records a replay's end.
    table: 'readWrite',
    // A frame's attachments carry download URLs made for its reader.
    files: ['read'],
    batchSize: 100,
    timeoutSeconds: 60,
    // A frame is worth sending only now: a batch that keeps failing is not held up long.
    retryAttempts: 2,
    // Users' partitions spread over concurrent batches; one user's changes stay in order in one.
    parallelization: 4,
    realtime: true,
    latencySensitive: true,
    // Events appended to a user's feed, and connections opened in that partition (their replay).
    sortKeys: { exact: [], prefix: ['EVT#', 'CONN#'] },
    insertsOnly: true,
  },
];
