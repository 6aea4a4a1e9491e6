import type { FileAccess, QueueName, TableAccess } from '#shared/routes/route';

/** Scheduled functions: an EventBridge rule on AWS, a timer locally. */
export interface Schedule {
  name: string;
  handler: string;
  everyMinutes: number;
  table: TableAccess;
  sends?: QueueName[];
  /** Uses the files bucket (FileAccess in shared/routes/route.ts). */
  files?: readonly FileAccess[];
  timeoutSeconds: number;
}

export const schedules: readonly Schedule[] = [
  {
    name: 'sweeper',
    handler: 'workers/sweeper',
    everyMinutes: 1,
    table: 'readWrite',
    sends: ['validation', 'purge', 'delivery'],
    // Deletes files never attached locally, where no S3 lifecycle rule does (on AWS the rule does, and it finds none).
    files: ['delete'],
    timeoutSeconds: 60,
  },
];
