/**
 * Provisioning users over the platform endpoints, against its floor, in one
 * run on one DynamoDB Local:
 *   - floor: the same writes made straight to the table (the contact with its
 *     username guard in one TransactWriteItems, the token in one PutItem), as
 *     many at once as the HTTP side sends;
 *   - measured: USERS contacts, each with a token, created by the app's
 *     backend with its secret key through the local HTTP server
 *     (`POST /v1/contacts`, then `POST /v1/contacts/{id}/tokens`), CONCURRENCY at once.
 * Also counts the DynamoDB calls and the write units per user (the authorizer's
 * token read is counted too, as it runs on every request here).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#shared/db/client';
import { startLocalRuntime } from '../scripts/local/runtime.ts';
import { seedDemo } from '../scripts/local/seed.ts';

const USERS = Number(process.env.BENCH_USERS ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 10);

/** Runs `one(i)` for i below USERS, CONCURRENCY at a time. */
async function inParallel(one: (i: number) => Promise<void>, count = USERS): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) await one(next++);
    }),
  );
  return (performance.now() - started) / 1000;
}

const meter = { calls: 0, writeUnits: 0 };
function meterDynamoDb(): void {
  db().middlewareStack.add(
    (next, context) => async (args) => {
      (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'TOTAL';
      const out = await next(args);
      meter.calls += 1;
      const consumed = (
        out.output as { ConsumedCapacity?: { CapacityUnits?: number; WriteCapacityUnits?: number; TableName?: string } | [] }
      ).ConsumedCapacity;
      // Reads (the authorizer's token, the contact a token is for) are not write units.
      if (!/^(Get|BatchGet|Query|Scan)/.test(String(context.commandName)))
        for (const c of [consumed ?? []].flat() as { CapacityUnits?: number }[]) meter.writeUnits += c.CapacityUnits ?? 0;
      return out;
    },
    { step: 'initialize', name: 'bench-provisioning' },
  );
}

async function floorSeconds(count = USERS): Promise<number> {
  const run = randomUUID();
  return inParallel(async (i) => {
    const contact = {
      pk: `FLOOR#${run}`,
      sk: `CONTACT#${i}`,
      gsi1pk: `FLOOR#${run}#CONTACTS`,
      gsi1sk: String(i),
      username: `u${i}`,
      created_at: 0,
    };
    await db().send(
      new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: tableName(), Item: contact, ConditionExpression: 'attribute_not_exists(pk)' } },
          {
            Put: {
              TableName: tableName(),
              Item: { pk: `FLOOR#${run}#USERNAME#u${i}`, sk: 'USERNAME' },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
        ],
      }),
    );
    const hash = randomBytes(32).toString('hex');
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: {
          pk: `TOKEN#${hash}`,
          sk: 'TOKEN',
          gsi1pk: `FLOOR#${run}#TOKENS`,
          gsi1sk: String(i),
          gsi2pk: `FLOOR#${hash}`,
          gsi2sk: 'TOKEN',
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }, count);
}

export interface ProvisioningResult {
  users: number;
  seconds: number;
  floorSeconds: number;
  callsPerUser: number;
  writeUnitsPerUser: number;
}

export async function provisioning(): Promise<ProvisioningResult> {
  const stack = await startLocalRuntime({ messagingPort: 0, emailPort: null, workers: false, rateLimits: false });
  try {
    const demo = await seedDemo();
    meterDynamoDb();
    const headers = { authorization: `Bearer ${demo.secretKey}`, 'content-type': 'application/json' };
    const provision = (prefix: string) => async (i: number) => {
      const contact = await fetch(`${stack.messagingUrl}/v1/contacts`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ username: `${prefix}${i}` }),
      });
      if (contact.status !== 201) throw new Error(`POST /v1/contacts answered ${contact.status}: ${await contact.text()}`);
      const { id } = (await contact.json()) as { id: string };
      const token = await fetch(`${stack.messagingUrl}/v1/contacts/${id}/tokens`, { method: 'POST', headers, body: '{}' });
      if (token.status !== 201) throw new Error(`POST /v1/contacts/{id}/tokens answered ${token.status}: ${await token.text()}`);
    };
    // A warm-up of each side (not counted): the server's modules and DynamoDB Local's JIT.
    await floorSeconds(USERS / 10);
    await inParallel(provision('warm'), USERS / 10);
    const floor = await floorSeconds();
    meter.calls = 0;
    meter.writeUnits = 0;
    const seconds = await inParallel(provision('user'));
    return { users: USERS, seconds, floorSeconds: floor, callsPerUser: meter.calls / USERS, writeUnitsPerUser: meter.writeUnits / USERS };
  } finally {
    await stack.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.env.LOG_LEVEL ??= 'silent';
  console.log(JSON.stringify(await provisioning()));
  process.exit(0);
}
