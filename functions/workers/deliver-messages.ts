import { jobWorker } from '#shared/jobs/worker';
import { fanout, retraction } from '#shared/messaging/fanout';

/** Continues delivering a group message to its recipients (or retracting it); a job out of time queues the rest. */
export const handler = jobWorker([fanout, retraction]);
