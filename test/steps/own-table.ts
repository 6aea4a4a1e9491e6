import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll } from 'vitest';
import { resetConfig } from '#shared/config';
import { resetDb } from '#shared/db/client';
import { ensureTable } from '../../scripts/local/resources.ts';
import { scopedEnv } from './scoped-env.ts';

/**
 * The file's tests run on a table of their own, made before them and left
 * behind after (TABLE_NAME put back): for code that scans the whole table,
 * such as a migration, which the suite's shared table would make slow and
 * others' items would confuse.
 */
export function onTableOfItsOwn(prefix: string): void {
  const env = scopedEnv(() => {
    resetConfig();
    resetDb();
  });
  beforeAll(async () => {
    const table = `${prefix}-${Date.now()}`;
    await ensureTable(new DynamoDBClient({ region: process.env.AWS_REGION ?? 'us-east-1' }), table);
    env.set({ TABLE_NAME: table });
  });
  afterAll(() => env.restore());
}
