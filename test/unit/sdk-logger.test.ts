import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { db, tableName } from '#shared/db/client';
import { sqsClient } from '#shared/util/sqs';

/**
 * The AWS clients are given a logger without `info`, so the SDK's logging
 * middleware (`logger?.info?.(…)`) never builds a call's input and output
 * filtered for sensitive fields, which no one reads (shared/util/sdk-logger.ts).
 */
describe('the AWS clients', () => {
  it('have a logger without info, and still answer', async () => {
    // Given the process's DynamoDB and SQS clients
    const clients = [db(), await sqsClient()];
    // Then their logger has no info to build a call's log line for
    for (const client of clients) {
      const { logger } = client.config;
      expect('info' in logger).toBe(false);
      expect(typeof logger.error).toBe('function');
    }
    // And a call goes through as before
    const out = await db().send(new GetCommand({ TableName: tableName(), Key: { pk: 'NO#SUCH', sk: 'ITEM' } }));
    expect(out.Item).toBeUndefined();
  });
});
