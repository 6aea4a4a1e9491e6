import type { DynamoDBRecord } from 'aws-lambda';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { CHANGED_MS } from '#shared/db/expression';
import type { Item } from '#shared/db/items';
import { accountWebhooks, type Webhook } from '#shared/data/webhooks';
import { queueUrlEnv } from '#shared/queues';
import { requireQueue, sendJsonBatch } from '#shared/util/sqs';
import { eventsOf, type Change } from '#shared/webhooks/events';
import type { WebhookEvent } from '#shared/webhooks/event-types';

/** A delivery job: one event for one endpoint, and which attempt comes next. */
export interface DeliveryJob {
  webhook_id: string;
  account_id: string;
  event: WebhookEvent;
  attempt: number;
  /** First attempt's time, ms (absent before the first): the retry schedule counts from it. */
  first_ms?: number;
  /** Not to be attempted before this time, ms: a wait longer than SQS's 15-minute delay is served in several sends. */
  not_before_ms?: number;
}

type Image = Parameters<typeof unmarshall>[0];

/** A stream record (Lambda's event, or the local poller's, which builds the same shape) as a change. */
export function changeOf(record: DynamoDBRecord): Change | undefined {
  const d = record.dynamodb;
  if (!d?.Keys || !record.eventName || !d.SequenceNumber) return undefined;
  const keys = unmarshall(d.Keys as Image);
  const newImage = d.NewImage ? unmarshall(d.NewImage as Image) : undefined;
  const oldImage = d.OldImage ? unmarshall(d.OldImage as Image) : undefined;
  return {
    eventName: record.eventName,
    sequenceNumber: d.SequenceNumber,
    createdMs: commitMs(record.eventName, Math.round((d.ApproximateCreationDateTime ?? 0) * 1000), newImage, oldImage),
    pk: String(keys.pk),
    sk: String(keys.sk),
    ...(newImage ? { newImage } : {}),
    ...(oldImage ? { oldImage } : {}),
  };
}

/** How far a write's own time may lie from the stream's before it is not believed: a minute (DynamoDB Local's rounding) and clock skew. */
const STAMP_TOLERANCE_MS = 61_000;

/**
 * When the change was made, to the millisecond. The stream's time is only
 * approximate (rounded down to the second on AWS, to the minute in DynamoDB
 * Local), so an event's `created_at` could differ from its object's own
 * timestamp and the ids of one second would not follow the changes. Every
 * write stamps its time (CHANGED_MS, shared/db/expression.ts): an insert or
 * update that carries a stamp of its own (not the one the item had before)
 * is dated by it. A delete leaves no new image, so it keeps the stream's time.
 */
function commitMs(eventName: string, streamMs: number, newImage?: Item, oldImage?: Item): number {
  const stamped = newImage?.[CHANGED_MS];
  if (eventName === 'REMOVE' || typeof stamped !== 'number' || stamped === oldImage?.[CHANGED_MS]) return streamMs;
  return Math.abs(stamped - streamMs) <= STAMP_TOLERANCE_MS ? stamped : streamMs;
}

export const subscribed = (w: Webhook, event: WebhookEvent) =>
  w.disabled_at === null && (w.events === null || w.events.includes(event.type));

/**
 * The delivery jobs of one change: its events, each for every enabled
 * endpoint of the event's account subscribed to its type. `endpoints`
 * caches each account's endpoints for the rest of the batch.
 */
export async function jobsOf(change: Change, endpoints: Map<string, Promise<Webhook[]>>): Promise<DeliveryJob[]> {
  const events = await eventsOf(change);
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
