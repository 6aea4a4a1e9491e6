import type { DynamoDBRecord } from 'aws-lambda';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { CHANGED_MS } from '#shared/db/expression';
import type { Item } from '#shared/db/items';

/** One committed change of one item, as the table's change stream reports it. */
export interface Change {
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE';
  /** The stream's sequence number: unique per change of the table, the same when a batch is delivered again. */
  sequenceNumber: string;
  /** When the change was committed, ms: the write's own stamp where it has one, else the stream's approximate time (commitMs). */
  createdMs: number;
  pk: string;
  sk: string;
  newImage?: Item;
  oldImage?: Item;
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
