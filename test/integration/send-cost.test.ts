import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#shared/db/client';
import { keys } from '#shared/db/keys';
import { ACTIVE_RESOLUTION_SECONDS } from '#shared/messaging/messages';
import { billedWriteUnits } from '../steps/dynamodb-calls.ts';
import { aTenant, type Tenant } from '../steps/given.ts';
import { apiClient, type ApiClient } from '../steps/when.ts';

/**
 * What a one-to-one send writes, as DynamoDB bills it (a transaction's
 * items twice, each index copy once): the budget a change of the send path
 * must answer to. docs/data-model.md explains each item. Units are at most
 * the budget: DynamoDB Local reports an update that changes nothing (a
 * second send within the same second leaves `last_active_at` as it was)
 * without its index copies.
 */
const BUDGET = {
  /** The message, both entries and locators, both conversations: 7 items, 4 index copies of the conversations, 2 of the entries. */
  send: { transactionItems: 7, units: 20 },
  /** The same, and the sender's contact marked active (1 item, 2 index copies). */
  marking: { transactionItems: 8, units: 24 },
  /** With an `Idempotency-Key`: its record, put before and completed after. */
  idempotent: { transactionItems: 7, units: 22 },
};

let messaging: ApiClient;
let t: Tenant;
let conversationId: string;
beforeAll(async () => {
  messaging = await apiClient('messaging', 'handler');
  t = await aTenant();
  conversationId = (await messaging.call('POST', '/v1/conversations', { token: t.token, form: { contact_id: t.contactIds.bob! } })).body.id;
});

/**
 * Bob's conversation is opened by the first delivery (its guard and the conversation, in place of an update), checking
 * that his contact is not deleted (a ConditionCheck, billed as a write).
 */
const OPENING = { transactionItems: 2, units: 4 };
afterAll(() => messaging.close());

const send = (message: string, headers?: Record<string, string>) =>
  billedWriteUnits(() =>
    messaging.call('POST', '/v1/messages', { token: t.token, form: { conversation_id: conversationId, message }, headers }),
  );
const aliceContact = async () =>
  (await messaging.call('GET', `/v1/contacts/${t.userContactId}`, { token: t.secretKey })).body as { last_active_at: number | null };

describe('the write units of a one-to-one send', () => {
  it('marks the sender active once a minute, and within the minute writes one item fewer', async () => {
    // Given alice, never active yet
    expect((await aliceContact()).last_active_at).toBeNull();
    // When she sends her first message
    const first = await send('first');
    // Then her contact is marked active at its creation, in the send's transaction
    expect(first.result.status).toBe(201);
    expect(first.result.body.contact.last_active_at).toBe(first.result.body.created_at);
    expect((await aliceContact()).last_active_at).toBe(first.result.body.created_at);
    expect(first.transactionItems).toBe(BUDGET.marking.transactionItems + OPENING.transactionItems);
    expect(first.units).toBeLessThanOrEqual(BUDGET.marking.units + OPENING.units);

    // When she sends again within the minute
    const second = await send('second');
    // Then the contact is left out: its mark stands, and the response shows it as stored
    expect(second.result.status).toBe(201);
    expect(second.transactionItems).toBe(BUDGET.send.transactionItems);
    expect(second.units).toBeLessThanOrEqual(BUDGET.send.units);
    expect(second.result.body.contact.last_active_at).toBe(first.result.body.created_at);
    expect((await aliceContact()).last_active_at).toBe(first.result.body.created_at);

    // Given her mark is older than the resolution
    const old = second.result.body.created_at - ACTIVE_RESOLUTION_SECONDS - 1;
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.contact.key({ acct: t.accountId, ct: t.userContactId }),
        UpdateExpression: 'SET last_active_at = :old',
        ExpressionAttributeValues: { ':old': old },
      }),
    );
    // When she sends
    const third = await send('third');
    // Then she is marked active again
    expect(third.transactionItems).toBe(BUDGET.marking.transactionItems);
    expect(third.units).toBeLessThanOrEqual(BUDGET.marking.units);
    expect((await aliceContact()).last_active_at).toBe(third.result.body.created_at);
    // And bob sees all three, each once
    const bobs = await messaging.call('GET', '/v1/conversations', { token: (await bobToken()).token });
    expect(bobs.body.data[0].unread_count).toBe(3);
  });

  it('with an Idempotency-Key, its record is what it adds', async () => {
    await send('warm');
    const keyed = await send('keyed', { 'Idempotency-Key': `send-cost-${Date.now()}` });
    expect(keyed.result.status).toBe(201);
    expect(keyed.transactionItems).toBe(BUDGET.idempotent.transactionItems);
    expect(keyed.units).toBeLessThanOrEqual(BUDGET.idempotent.units);
  });
});

async function bobToken() {
  const res = await messaging.call('POST', `/v1/contacts/${t.contactIds.bob}/tokens`, { token: t.secretKey, form: {} });
  return res.body as { token: string };
}
