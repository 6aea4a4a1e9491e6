import type { DynamoDBRecord } from 'aws-lambda';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { Item } from '#shared/db/items';

/** One committed change of one item, as the table's change stream reports it. */
export interface Change {
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE';
  /** The stream's sequence number: unique per change of the table, the same when a batch is delivered again. */
  sequenceNumber: string;
  /** When the change was committed (the stream's approximate creation time), ms. */
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
  return {
    eventName: record.eventName,
    sequenceNumber: d.SequenceNumber,
    createdMs: Math.round((d.ApproximateCreationDateTime ?? 0) * 1000),
    pk: String(keys.pk),
    sk: String(keys.sk),
    ...(d.NewImage ? { newImage: unmarshall(d.NewImage as Image) } : {}),
    ...(d.OldImage ? { oldImage: unmarshall(d.OldImage as Image) } : {}),
  };
}
