import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { db, tableName } from '#shared/db/client';
import { streams } from '#shared/routes';
import { startStreams } from '../../scripts/local/runtime.ts';
import { startStreamSource } from '../../scripts/local/stream-source.ts';
import { eventually } from '../steps/eventually.ts';
import { onTableOfItsOwn } from '../steps/own-table.ts';

// A table of its own: the source reads the table's whole stream from its start.
onTableOfItsOwn('stream-source');

/** A source for one consumer of the table's stream, each record it hands over passed to `take`. */
const recording = (name: string, take: (record: DynamoDBStreamEvent['Records'][number]) => void) =>
  startStreamSource(
    streams.find((s) => s.name === name)!,
    {
      endpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB!,
      region: process.env.AWS_REGION ?? 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      tableName: tableName(),
      idleMs: 10,
      run: async (_fn, event) => {
        for (const r of (event as DynamoDBStreamEvent).Records) take(r);
        return { batchItemFailures: [] };
      },
    },
  );

describe('the local stream source', () => {
  it("invokes a consumer only with the changes its event filter lets through, as Lambda's mapping does", async () => {
    // Given the events feed's consumer (sort keys CONV, LIST exactly, MSG# and #MSG# as prefixes), its invocations recorded
    const received: string[] = [];
    const source = recording('event-feed', (r) => received.push(r.dynamodb!.Keys!.sk!.S!));
    try {
      // When items of one partition are written, some of sort keys the filter leaves out, and last a sentinel it lets through
      const sks = ['GUARD', 'MSG#1', 'CONVX', 'CONV', 'X#MSG#2', '#MSG#3', 'LIST', 'EVT#4', 'MSG#sentinel'];
      for (const sk of sks) await db().send(new PutCommand({ TableName: tableName(), Item: { pk: 'STREAM#FILTER', sk } }));
      // Then once the sentinel has arrived, the consumer has had exactly the filter's changes, in order
      await eventually(() => received.includes('MSG#sentinel'), { what: 'the sentinel', timeoutMs: 20_000, intervalMs: 20 });
      expect(received).toEqual(['MSG#1', 'CONV', '#MSG#3', 'LIST', 'MSG#sentinel']);
    } finally {
      await source.stop();
    }
  });

  it('invokes a consumer of inserts only with inserts: the removals of its items (their TTL) invoke nothing', async () => {
    // Given the realtime consumer (EVT# and CONN# items, inserts only), its invocations recorded
    expect(streams.find((s) => s.name === 'realtime-events')!.insertsOnly).toBe(true);
    const received: string[] = [];
    const source = recording('realtime-events', (r) => {
      if (r.dynamodb!.Keys!.pk!.S === 'STREAM#INSERTS') received.push(`${r.eventName} ${r.dynamodb!.Keys!.sk!.S!}`);
    });
    try {
      // When an event item is written, changed and deleted, then a sentinel inserted
      const key = { pk: 'STREAM#INSERTS', sk: 'EVT#1' };
      await db().send(new PutCommand({ TableName: tableName(), Item: key }));
      await db().send(new PutCommand({ TableName: tableName(), Item: { ...key, changed: true } }));
      await db().send(new DeleteCommand({ TableName: tableName(), Key: key }));
      await db().send(new PutCommand({ TableName: tableName(), Item: { pk: 'STREAM#INSERTS', sk: 'EVT#sentinel' } }));
      // Then the consumer had the two inserts alone
      await eventually(() => received.includes('INSERT EVT#sentinel'), { what: 'the sentinel', timeoutMs: 20_000, intervalMs: 20 });
      expect(received).toEqual(['INSERT EVT#1', 'INSERT EVT#sentinel']);
    } finally {
      await source.stop();
    }
  });

  it('reads a change this process writes at once, though idle pollers would not look again for a minute', async () => {
    // Given the runtime's consumers, idle for 60 s between polls, their invocations recorded
    const received = new Set<string>();
    const sources = startStreams(process.env as Record<string, string>, {
      idleMs: 60_000,
      run: async (_fn, event) => {
        for (const r of (event as DynamoDBStreamEvent).Records) received.add(r.dynamodb!.Keys!.pk!.S!);
        return { batchItemFailures: [] };
      },
    });
    try {
      // When this process writes one change after another, each once the last has been read
      for (let i = 0; i < 3; i++) {
        const pk = `STREAM#WOKEN#${i}`;
        await db().send(new PutCommand({ TableName: tableName(), Item: { pk, sk: 'CONV' } }));
        // Then each is read within seconds: its write woke the pollers
        await eventually(() => received.has(pk), {
          what: `change ${i}, read before the next idle poll`,
          timeoutMs: 10_000,
          intervalMs: 20,
        });
      }
    } finally {
      await sources.stop();
    }
  });
});
