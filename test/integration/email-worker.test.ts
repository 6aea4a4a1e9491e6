import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCredits } from '#shared/data/accounts';
import { getEmailList, listStatus } from '#shared/data/email-lists';
import { storeEmails } from '#shared/data/email-adds';
import { deleteOutbox } from '#shared/data/outbox';
import { applyDeltas } from '#shared/data/collections';
import { db, tableName } from '#shared/db/client';
import { keys } from '#shared/db/keys';
import { resumeAwaiting } from '#shared/email/outbox';
import { handler as sweeper } from '#functions/workers/sweeper';
import { aTenant, type Tenant } from '../steps/given.ts';
import { emailEnv, type EmailEnv } from '../steps/email-env.ts';
import { eventually } from '../steps/eventually.ts';
import { validationSettled } from '../steps/queues.ts';
import { captureLogs } from '../steps/logs.ts';
import { apiClient, type ApiClient } from '../steps/when.ts';

/** The queue path against the SQS emulator, with workers polling it as Lambda's event source mapping would. */
describe('email validation worker', () => {
  let env: EmailEnv | undefined;
  let api: ApiClient;
  let t: Tenant;
  const sqs = new SQSClient({});

  beforeAll(async () => {
    env = await emailEnv();
    api = await apiClient('email', 'handler');
    t = await aTenant();
  });
  afterAll(async () => {
    sqs.destroy();
    await env?.stop();
  });

  const newList = async (tenant = t) =>
    (await api.call('POST', '/api/v1/emailList', { token: tenant.token, json: { name: 'worker test' } })).body;
  const add = (listId: number, emails: string[], tenant = t) =>
    api.call('POST', `/api/v1/emailList/${listId}/emails`, { token: tenant.token, json: { emails } });
  const internals = (listId: number, tenant = t) => getEmailList(tenant.accountId, listId);
  const completed = (listId: number, tenant = t) =>
    eventually(
      async () => {
        const list = await internals(listId, tenant);
        return list && listStatus(list) === 'completed' && list;
      },
      { what: `list ${listId} completed`, timeoutMs: 25_000 },
    );

  it('does not count a redelivered message twice', async () => {
    // Given a list of three emails, validated
    const list = await newList();
    const res = await add(list.id, ['r1@example.com', 'r2@example.com', 'r3@example.com']);
    await completed(list.id);
    const ids = res.body.emails.map((e: { id: number }) => e.id);
    // When the same work comes again, as SQS delivers it after a worker crashed before deleting the message
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: process.env.VALIDATION_QUEUE_URL!,
        MessageBody: JSON.stringify({ accountId: t.accountId, emailIds: ids }),
      }),
    );
    // Then, once the worker has handled it to the end, the list counts each email once
    await validationSettled();
    expect(await internals(list.id)).toMatchObject({ email_count: 3, pending_count: 0, awaiting_count: 0, has_error: false });
  });

  it('records an email whose DNS keeps failing as error on the last attempt, leaving its list completed', async () => {
    const list = await newList();
    const logs = captureLogs('warn');
    let final;
    let id: number;
    try {
      const res = await add(list.id, ['x@broken.test', 'fine@example.com']);
      id = res.body.emails[0].id;
      final = await completed(list.id);
    } finally {
      logs.stop();
    }
    expect(final).toMatchObject({ email_count: 2, has_error: false });
    // Each failed attempt is a warning naming the email and its list (never the address), the last one says so.
    const mine = logs.lines().filter((l) => l.email_id === id);
    expect(mine.map((l) => [l.level, l.message])).toEqual([
      ...Array(2).fill(['WARN', 'validation failed; it will be retried']),
      ['WARN', 'validation failed on its last attempt; recorded as error'],
    ]);
    for (const line of mine)
      expect(line).toMatchObject({
        list_id: list.id,
        reason: expect.stringContaining('broken.test'),
        function_name: 'workers-validate-emails',
      });
    expect(JSON.stringify(logs.lines())).not.toContain('x@broken.test');
    const email = await api.call('GET', `/api/v1/email/${id}`, { token: t.token });
    expect(email.body.status).toBe('error');
    // It took every allowed receive: the queue's retries, not the dead-letter queue, ended it.
    expect(env!.dns.count('broken.test', 'MX')).toBeGreaterThanOrEqual(2 * 3);
  }, 40_000);

  it('drops a malformed message without blocking the queue', async () => {
    await sqs.send(new SendMessageCommand({ QueueUrl: process.env.VALIDATION_QUEUE_URL!, MessageBody: '{"accountId": 7}' }));
    const list = await newList();
    await add(list.id, ['after-poison@example.com']);
    expect(await completed(list.id)).toMatchObject({ email_count: 1 });
  });

  it('marks the emails and the list error when their batch reaches the dead-letter queue', async () => {
    const list = await newList();
    // Stored, then (as after maxReceiveCount failed receives) found on the dead-letter queue.
    const [chunk] = await storeEmails(t.accountId, { kind: 'list', listId: list.id }, ['dead1@example.com', 'dead2@example.com'], 0);
    await applyDeltas(chunk!.outbox.collection, [{ token: chunk!.outbox.token, deltas: chunk!.outbox.deltas! }], true);
    await deleteOutbox(chunk!.outbox);
    const ids = chunk!.emails.map((e) => e.id);
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: process.env.VALIDATION_DLQ_URL!,
        MessageBody: JSON.stringify({ accountId: t.accountId, emailIds: ids }),
      }),
    );
    const failed = await eventually(
      async () => {
        const current = await internals(list.id);
        return current && listStatus(current) === 'error' && current.pending_count === 0 && current;
      },
      { what: `list ${list.id} marked error` },
    );
    expect(failed).toMatchObject({ email_count: 2, has_error: true });
    for (const id of ids) {
      expect((await api.call('GET', `/api/v1/email/${id}`, { token: t.token })).body.status).toBe('error');
    }
  });

  it('moves a message the worker keeps failing to the dead-letter queue after maxReceiveCount receives', async () => {
    // The emulator's redrive, which the local event source relies on, on a queue no worker reads.
    const { ensureQueues } = await import('../../scripts/local/resources.ts');
    const { ReceiveMessageCommand } = await import('@aws-sdk/client-sqs');
    const queuesEnv = await ensureQueues(sqs, `redrive-${Date.now()}`, 1);
    await sqs.send(new SendMessageCommand({ QueueUrl: queuesEnv.VALIDATION_QUEUE_URL!, MessageBody: 'poison' }));
    const { queues } = await import('#shared/queues');
    for (let i = 0; i < queues.validation.maxReceiveCount; i++) {
      await eventually(
        async () =>
          (await sqs.send(new ReceiveMessageCommand({ QueueUrl: queuesEnv.VALIDATION_QUEUE_URL!, WaitTimeSeconds: 1 }))).Messages?.length,
        { what: `receive ${i + 1} of the poison message` },
      );
    }
    const dead = await eventually(
      async () => {
        await sqs.send(new ReceiveMessageCommand({ QueueUrl: queuesEnv.VALIDATION_QUEUE_URL!, WaitTimeSeconds: 1 }));
        return (await sqs.send(new ReceiveMessageCommand({ QueueUrl: queuesEnv.VALIDATION_DLQ_URL!, WaitTimeSeconds: 1 }))).Messages;
      },
      { what: 'the poison message on the dead-letter queue' },
    );
    expect(dead[0]!.Body).toBe('poison');
  }, 30_000);

  it('re-sends work a crash stranded between the database and the queue', async () => {
    const list = await newList();
    // Stored with its outbox, but never queued (the request died here).
    const [chunk] = await storeEmails(t.accountId, { kind: 'list', listId: list.id }, ['stranded@example.com'], 0);
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.outbox.key({ acct: t.accountId, uuid: chunk!.outbox.outbox_id }),
        UpdateExpression: 'SET gsi2sk = :old',
        ExpressionAttributeValues: { ':old': keys.readyOutboxes.sortKey({ ms: Date.now() - 10 * 60_000 }) },
      }),
    );
    // Nothing queued it: once every message sent so far is handled, the list does not count the email yet
    // (its counts wait in the outbox too), and nothing validated it.
    await validationSettled();
    expect(await internals(list.id)).toMatchObject({ email_count: 0, pending_count: 0 });
    expect((await api.call('GET', `/api/v1/email/${chunk!.emails[0]!.id}`, { token: t.token })).body.status).toBe('pending');
    const { resent } = await sweeper();
    expect(resent).toBeGreaterThanOrEqual(1);
    expect(await completed(list.id)).toMatchObject({ email_count: 1 });
  });

  it('holds emails beyond the credit balance, then resumes by itself when credits are added', async () => {
    const tenant = await aTenant();
    await addCredits(tenant.accountId, 2);
    const list = await newList(tenant);
    const res = await add(list.id, ['c1@example.com', 'c2@example.com', 'c3@example.com'], tenant);
    expect(res.body.emailList.status).toBe('insufficient_credits');
    expect(res.body.emailList.progress).toEqual({ pending: 0, insufficient_credits: 3, finished: 0 });
    expect(res.body.emails.every((e: { status: string }) => e.status === 'pending')).toBe(true);
    // Nothing queued them: once every message sent so far is handled, the list still waits for credits, its emails unvalidated
    await validationSettled();
    expect(listStatus((await internals(list.id, tenant))!)).toBe('insufficient_credits');
    const held = await Promise.all(
      res.body.emails.map((e: { id: number }) => api.call('GET', `/api/v1/email/${e.id}`, { token: tenant.token })),
    );
    expect(held.map((e) => e.body.status)).toEqual(['pending', 'pending', 'pending']);

    // What `npm run admin -- credits add` does.
    await addCredits(tenant.accountId, 5);
    await resumeAwaiting(tenant.accountId);
    expect(await completed(list.id, tenant)).toMatchObject({ email_count: 3, awaiting_count: 0 });
    const { creditBalance } = await import('#shared/data/accounts');
    expect(await creditBalance(tenant.accountId)).toBe(4);
  });

  it('releases held work from the sweeper too', async () => {
    const tenant = await aTenant();
    await addCredits(tenant.accountId, 0);
    const res = await api.call('POST', '/api/v1/emails', { token: tenant.token, json: { emails: ['held@example.com'] } });
    expect(res.body.emails[0].status).toBe('pending');
    await addCredits(tenant.accountId, 1);
    await sweeper();
    const id = res.body.emails[0].id;
    await eventually(async () => (await api.call('GET', `/api/v1/email/${id}`, { token: tenant.token })).body.status === 'completed', {
      what: `email ${id} completed`,
    });
  });
});
