import type { queues } from '#shared/queues';

/**
 * Every kind of durable job, and the queue that continues it past its
 * request (docs/architecture.md, "Durable jobs"). Delivery has a queue of
 * its own: someone waits for a group message, and a large deletion's
 * minutes of batches must not stand in front of it. The purges share the
 * other. A kind is added here, as a module with its payload and `step`,
 * and to the worker of its queue.
 */
export const JOB_QUEUES = {
  fanout: 'delivery',
  retraction: 'delivery',
  'purge-conversation': 'purge',
  'purge-list': 'purge',
  'purge-contact': 'purge',
  'purge-group': 'purge',
  'file-release': 'purge',
  'list-import': 'purge',
  'list-export': 'purge',
} as const satisfies Record<string, keyof typeof queues>;

export type JobName = keyof typeof JOB_QUEUES;

export const JOB_NAMES = Object.keys(JOB_QUEUES) as JobName[];

export const isJobName = (name: string): name is JobName => Object.hasOwn(JOB_QUEUES, name);
