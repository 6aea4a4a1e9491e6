import type { FileAccess, QueueName, TableAccess } from '#shared/routes/route';

/** Queue consumers: the Lambda event source mapping on AWS, a poller locally. */
export interface Worker {
  name: string;
  handler: string;
  queue: QueueName;
  table: TableAccess;
  sends?: QueueName[];
  batchSize: number;
  timeoutSeconds: number;
  /** Most concurrent invocations the event source starts (Lambda's minimum is 2); docs/operations.md says why. */
  maxConcurrency: number;
  /** Consume the queue's dead-letter queue instead of the queue itself. */
  deadLetters?: boolean;
  validates?: boolean;
  /** Opens webhook secrets (kms:Decrypt on the webhook key). */
  decrypts?: boolean;
  /** Uses the files bucket (FileAccess in shared/routes/route.ts). */
  files?: readonly FileAccess[];
  /**
   * Locally, receive one message at a time: the SQS emulator holds a long
   * poll until the batch is full or the wait ends, where SQS answers as soon
   * as a message is there. For workers with a latency to keep locally (a
   * webhook's first attempt within 2 s of the response that caused it).
   */
  latencySensitive?: boolean;
}

export const workers: readonly Worker[] = [
  {
    name: 'purge',
    handler: 'workers/purge',
    queue: 'purge',
    table: 'readWrite',
    // CSV imports (list-import) add their rows through addToList, which queues validation, and read their file.
    sends: ['purge', 'validation'],
    files: ['read', 'write', 'delete'],
    batchSize: 1,
    timeoutSeconds: 60,
    maxConcurrency: 2,
  },
  {
    name: 'deliver-messages',
    handler: 'workers/deliver-messages',
    queue: 'delivery',
    table: 'readWrite',
    sends: ['delivery'],
    files: ['write', 'delete'],
    batchSize: 1,
    timeoutSeconds: 60,
    maxConcurrency: 2,
  },
  {
    name: 'validate-emails',
    handler: 'workers/validate-emails',
    queue: 'validation',
    table: 'readWrite',
    // A greylisted address comes back after a delay, and one still running at the run's deadline at once: as new messages.
    sends: ['validation'],
    validates: true,
    batchSize: 10,
    timeoutSeconds: 60,
    maxConcurrency: 5,
  },
  {
    name: 'deliver-webhooks',
    handler: 'workers/deliver-webhooks',
    queue: 'webhooks',
    table: 'readWrite',
    sends: ['webhooks'],
    files: ['read'],
    batchSize: 10,
    // Ten attempts of at most 10 s each, in parallel, with room for the records and the next sends.
    timeoutSeconds: 30,
    maxConcurrency: 2,
    decrypts: true,
    latencySensitive: true,
  },
  {
    name: 'validation-dead-letters',
    handler: 'workers/validation-dead-letters',
    queue: 'validation',
    deadLetters: true,
    table: 'readWrite',
    batchSize: 10,
    timeoutSeconds: 60,
    maxConcurrency: 2,
  },
];
