import { accountWebhooks, type Webhook } from '#shared/data/webhooks';
import { queueUrlEnv } from '#shared/queues';
import { requireQueue, sendJsonBatch } from '#shared/util/sqs';
import { accountEventsOf } from '#shared/stream/account';
import type { Change } from '#shared/stream/change';
import type { StreamEvent } from '#shared/stream/event';

/** A delivery job: one event for one endpoint, and which attempt comes next. */
export interface DeliveryJob {
  webhook_id: string;
  account_id: string;
  /** What the endpoint receives: the body of the POST. */
  event: StreamEvent;
  attempt: number;
  /** First attempt's time, ms (absent before the first): the retry schedule counts from it. */
  first_ms?: number;
  /** Not to be attempted before this time, ms: a wait longer than SQS's 15-minute delay is served in several sends. */
  not_before_ms?: number;
}

export const subscribed = (w: Webhook, event: StreamEvent) =>
  w.disabled_at === null && (w.events === null || w.events.includes(event.type));

/**
 * The delivery jobs of one change: its events, each for every enabled
 * endpoint of the event's account subscribed to its type. `endpoints`
 * caches each account's endpoints for the rest of the batch.
 */
export async function jobsOf(change: Change, endpoints: Map<string, Promise<Webhook[]>>): Promise<DeliveryJob[]> {
  const events = await accountEventsOf(change);
  const jobs: DeliveryJob[] = [];
  for (const { accountId, event } of events) {
    let hooks = endpoints.get(accountId);
    if (!hooks) endpoints.set(accountId, (hooks = accountWebhooks(accountId)));
    for (const w of await hooks) if (subscribed(w, event)) jobs.push({ webhook_id: w.id, account_id: accountId, event, attempt: 1 });
  }
  return jobs;
}

export const webhooksQueueUrl = () => requireQueue(process.env[queueUrlEnv('webhooks')], 'the webhooks queue');

export const enqueueJobs = (jobs: DeliveryJob[]) => (jobs.length ? sendJsonBatch(webhooksQueueUrl(), jobs) : Promise.resolve());
