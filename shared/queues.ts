/**
 * Queue definitions shared by the CDK stack and the local runtime.
 * visibilityTimeoutSeconds is at least six times the consuming worker's
 * timeout, as AWS recommends for SQS event sources.
 */
export interface QueueDefinition {
  /** Suffix of the physical name; the local runtime uses it as the queue name. */
  name: string;
  visibilityTimeoutSeconds: number;
  /** Receives before a message is moved to the dead-letter queue. */
  maxReceiveCount: number;
}

export const queues = {
  purge: { name: 'purge', visibilityTimeoutSeconds: 360, maxReceiveCount: 5 },
  validation: { name: 'validation', visibilityTimeoutSeconds: 360, maxReceiveCount: 3 },
  delivery: { name: 'delivery', visibilityTimeoutSeconds: 360, maxReceiveCount: 5 },
  /** Webhook attempts: the worker schedules retries itself (a new message per attempt), so a receive fails only on our own errors. */
  webhooks: { name: 'webhooks', visibilityTimeoutSeconds: 360, maxReceiveCount: 5 },
} as const satisfies Record<string, QueueDefinition>;

/** Environment variable through which a function learns a queue's URL. */
export const queueUrlEnv = (queue: keyof typeof queues) => `${queue.toUpperCase()}_QUEUE_URL`;

/** Environment variable through which the local runtime learns a dead-letter queue's URL. */
export const deadLetterUrlEnv = (queue: keyof typeof queues) => `${queue.toUpperCase()}_DLQ_URL`;
