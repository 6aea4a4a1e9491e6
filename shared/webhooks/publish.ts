import { accountWebhooks, type Webhook } from '#shared/data/webhooks';
import { queueUrlEnv } from '#shared/queues';
import { requireQueue, sendJsonBatch } from '#shared/util/sqs';
import { eventOf, type FeedEvent } from '#shared/data/events';
import { keys } from '#shared/db/keys';
import type { Change } from '#shared/stream/change';

/** A delivery job: one event for one endpoint, and which attempt comes next. */
export interface DeliveryJob {
  webhook_id: string;
  account_id: string;
  /** What the endpoint receives: the body of the POST. */
  event: FeedEvent;
  attempt: number;
  /** First attempt's time, ms (absent before the first): the retry schedule counts from it. */
  first_ms?: number;
  /** Not to be attempted before this time, ms: a wait longer than SQS's 15-minute delay is served in several sends. */
  not_before_ms?: number;
}

export const subscribed = (w: Webhook, event: FeedEvent) =>
  w.disabled_at === null && (w.events === null || (w.events as readonly string[]).includes(event.type));

/**
 * The delivery jobs of one change: an event appended to the account's feed
 * (shared/events/record.ts), for every enabled endpoint of the account
 * subscribed to its type. A webhook's body is the very object the account's
 * feed lists, its id included. `endpoints` caches each account's endpoints
 * for the rest of the batch.
 */
export async function jobsOf(change: Change, endpoints: Map<string, Promise<Webhook[]>>): Promise<DeliveryJob[]> {
  const at = keys.accountEvent.parse(change);
  if (!at || change.eventName !== 'INSERT' || !change.newImage) return [];
  const accountId = at.acct;
  const event = eventOf(change.newImage);
  let hooks = endpoints.get(accountId);
  if (!hooks) endpoints.set(accountId, (hooks = accountWebhooks(accountId)));
  return (await hooks).filter((w) => subscribed(w, event)).map((w) => ({ webhook_id: w.id, account_id: accountId, event, attempt: 1 }));
}

export const webhooksQueueUrl = () => requireQueue(process.env[queueUrlEnv('webhooks')], 'the webhooks queue');

export const enqueueJobs = (jobs: DeliveryJob[]) => (jobs.length ? sendJsonBatch(webhooksQueueUrl(), jobs) : Promise.resolve());
