import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyDeltas } from '#shared/data/collections';
import { createEmailList, getEmailList, listStatus } from '#shared/data/email-lists';
import { storeEmails } from '#shared/data/email-adds';
import { getEmail } from '#shared/data/emails';
import { markQueued } from '#shared/data/outbox';
import { transactWrite } from '#shared/db/batch';
import { keys } from '#shared/db/keys';
import { handler as deadLetters } from '#functions/workers/validation-dead-letters';
import { recoverLostWork, settle } from '#shared/email/outbox';
import { resetConfig } from '#shared/config';
import { scopedEnv } from '../steps/scoped-env.ts';
import { aTenant, type Tenant } from '../steps/given.ts';
import { emailEnv, type EmailEnv } from '../steps/email-env.ts';
import { eventually } from '../steps/eventually.ts';
import { validationSettled } from '../steps/queues.ts';

const record = (messageId: string, body: unknown) =>
  ({ messageId, body: JSON.stringify(body), attributes: { ApproximateReceiveCount: '1' } }) as unknown as SQSEvent['Records'][number];

/** Work stored, counted and queued, whose queue message was then lost. */
async function storedWithLostMessage(t: Tenant, listId: number, addresses: string[], dueMs?: number) {
  const chunks = await storeEmails(t.accountId, { kind: 'list', listId }, addresses, 0);
  for (const c of chunks) {
    await applyDeltas(c.outbox.collection, [{ token: c.outbox.token, deltas: c.outbox.deltas! }], true);
    await markQueued([c.outbox], dueMs);
  }
  return chunks.flatMap((c) => c.emails);
}

async function newList(t: Tenant) {
  const list = await createEmailList(t.accountId, { name: 'recovery' });
  return list;
}

describe('recovering lost validation work', () => {
  let env: EmailEnv | undefined;
  let t: Tenant;
  beforeAll(async () => {
    env = await emailEnv();
    t = await aTenant();
  });
  afterAll(() => env?.stop());

  it('re-queues unfinished emails once their due time has passed, and leaves the others alone', async () => {
    // Given two emails whose message was lost, one of them past its due time
    const list = await newList(t);
    const [overdue] = await storedWithLostMessage(t, list.id, ['lost1@example.com'], Date.now() - 1000);
    const [recent] = await storedWithLostMessage(t, list.id, ['lost2@example.com']);
    // When the sweeper's recovery pass runs (stranded outboxes left to the files that strand them)
    const pass = () => recoverLostWork({ strandedAfterMs: 24 * 60 * 60_000, dueBeforeMs: Date.now(), deadline: Date.now() + 10_000 });
    const { requeued } = await pass();
    // Then the overdue one is validated, the other still waits for its own due time
    expect(requeued).toBeGreaterThanOrEqual(1);
    await eventually(async () => (await getEmail(t.accountId, overdue!.id))?.status === 'completed', {
      what: 'the overdue email completed',
    });
    // (looked at once every message queued so far is handled: the overdue one's went out in a message of its own)
    await validationSettled();
    expect((await getEmail(t.accountId, recent!.id))?.status).toBe('pending');
    // And a second pass leaves it alone: its due time moved on when it was queued again
    expect((await pass()).requeued).toBe(0);
  });

  it('restores the emails of a request that crashed between its transaction and its batch writes, but never a deleted one', async () => {
    // Given a request whose guards and outbox committed, then crashed before writing its emails
    // (simulated: the emails removed again, the outbox never settled), and one of them deleted by its owner meanwhile
    const list = await newList(t);
    const [chunk] = await storeEmails(
      t.accountId,
      { kind: 'list', listId: list.id },
      ['crash1@example.com', 'crash2@example.com', 'crash3@example.com'],
      0,
    );
    const [kept1, kept2, deleted] = chunk!.emails;
    await transactWrite({
      TransactItems: [
        ...chunk!.emails.map((e) => ({
          Delete: { TableName: process.env.TABLE_NAME!, Key: keys.email.key({ acct: t.accountId, email: e.id }) },
        })),
        {
          Delete: {
            TableName: process.env.TABLE_NAME!,
            Key: keys.listAddress.key({ acct: t.accountId, list: list.id, address: deleted!.email }),
          },
        },
      ],
    });
    // When the recovery pass finds the stranded outbox
    await recoverLostWork({ strandedAfterMs: 0, dueBeforeMs: 0, deadline: Date.now() + 10_000 });
    // Then the two whose guards still name them are back and validated, and the list's counts say so
    await eventually(async () => (await getEmail(t.accountId, kept1!.id))?.status === 'completed', {
      what: 'the first kept email completed',
    });
    await eventually(async () => (await getEmail(t.accountId, kept2!.id))?.status === 'completed', {
      what: 'the second kept email completed',
    });
    // And the deleted one stays deleted
    expect(await getEmail(t.accountId, deleted!.id)).toBeUndefined();
  });

  it('leaves the work of a failed queue send due at once, for the next recovery pass', async () => {
    // Given stored emails whose queue send fails (a queue that does not exist)
    const list = await newList(t);
    const [chunk] = await storeEmails(t.accountId, { kind: 'list', listId: list.id }, ['unsent@example.com'], 0);
    const env = scopedEnv(resetConfig);
    env.set({ VALIDATION_QUEUE_URL: `${process.env.VALIDATION_QUEUE_URL}-missing` });
    try {
      await expect(settle(chunk!.outbox.collection, true, [chunk!.outbox])).rejects.toThrow();
    } finally {
      env.restore();
    }
    // When the recovery pass runs with nothing overdue by the usual 30 minutes
    const { requeued } = await recoverLostWork({
      strandedAfterMs: 24 * 60 * 60_000,
      dueBeforeMs: Date.now() + 1,
      deadline: Date.now() + 10_000,
    });
    // Then it queues the email again, and the list completes with its count
    expect(requeued).toBeGreaterThanOrEqual(1);
    await eventually(async () => (await getEmail(t.accountId, chunk!.emails[0]!.id))?.status === 'completed', {
      what: 'the stranded email completed',
    });
    expect(await getEmailList(t.accountId, list.id)).toMatchObject({ email_count: 1, pending_count: 0 });
  });

  it('handles dead letters one by one: a failing record comes back alone, the others are done', async () => {
    const list = await newList(t);
    const emails = await storedWithLostMessage(t, list.id, ['dl1@example.com', 'dl2@example.com']);
    const result = await deadLetters({
      Records: [
        record('good', { accountId: t.accountId, emailIds: emails.map((e) => e.id) }),
        // An account id no key can hold: DynamoDB refuses the read.
        record('bad', { accountId: 'x'.repeat(3000), emailIds: [1] }),
      ],
    });
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'bad' }]);
    const after = await getEmailList(t.accountId, list.id);
    expect(listStatus(after!)).toBe('error');
    expect(after).toMatchObject({ pending_count: 0, email_count: 2 });
  });
});
