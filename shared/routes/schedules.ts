import type { QueueName, TableAccess } from '#shared/routes/route';

/** Scheduled functions: an EventBridge rule on AWS, a timer locally. */
export interface Schedule {
  name: string;
  handler: string;
  everyMinutes: number;
  table: TableAccess;
  sends?: QueueName[];
  timeoutSeconds: number;
}

export const schedules: readonly Schedule[] = [
  {
    name: 'sweeper',
    handler: 'workers/sweeper',
    everyMinutes: 1,
    table: 'readWrite',
    sends: ['validation', 'purge', 'delivery'],
    timeoutSeconds: 60,
  },
];
