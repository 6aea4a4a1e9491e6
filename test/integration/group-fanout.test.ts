import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#shared/db/client';
import { keys } from '#shared/db/keys';
import { LEASE_MS } from '#shared/data/jobs';
import { messageSubject } from '#shared/messaging/fanout';
import { routes } from '#shared/routes';
import { startWorkers } from '../../scripts/local/runtime.ts';
import { aTenant, groupMembersOf } from '../steps/given.ts';
import { holdings } from '../steps/holdings.ts';
import { apiClient, type ApiClient } from '../steps/when.ts';
import { eventually } from '../steps/eventually.ts';
import { jobOf } from '../steps/jobs.ts';

let workers: ReturnType<typeof startWorkers>;
let messaging: ApiClient;
beforeAll(async () => {
  workers = startWorkers(process.env as Record<string, string>, { waitSeconds: 1 });
  messaging = await apiClient('messaging', 'http');
});
afterAll(async () => {
  await workers.stop();
  await messaging.close();
});

/** The send's Lambda timeout: its answer must come well within it, whatever the group's size. */
const SEND_TIMEOUT_MS = routes.find((r) => r.handler === 'messages/create')!.timeoutSeconds! * 1000;

describe('a send to a 1,000-member group, through the delivery queue and worker', () => {
  it('answers at once, then reaches every member exactly once, also after a redelivered job', { timeout: 240_000 }, async () => {
    // Given a group of 1,000 members (alice, bob, carol and 997 more)
    const t = await aTenant();
    const others = await groupMembersOf(t, 997, { tokens: false });
    const recipients = [t.contactIds.bob!, t.contactIds.carol!, ...others.map((m) => m.contactId)];
    const conversation = (await messaging.call('POST', '/v1/conversations', { token: t.token, form: { group_id: t.groupId } })).body;
    // When alice sends to it, through the local server
    const started = Date.now();
    const sent = await messaging.call('POST', '/v1/messages', {
      token: t.token,
      form: { conversation_id: conversation.id, message: 'all hands' },
    });
    const answeredMs = Date.now() - started;
    expect(sent.status).toBe(201);
    const message = sent.body;
    // Then the answer comes within the function's timeout (the inline part stops at 2.5 s; the queue takes the rest)
    expect(answeredMs).toBeLessThan(SEND_TIMEOUT_MS / 2);
    // And the record lists every recipient, and the worker finishes what the request left
    const job = { accountId: t.accountId, subject: messageSubject(message.id) };
    expect(((await jobOf(job))!.payload as { recipients: string[] }).recipients.sort()).toEqual([...recipients].sort());
    await eventually(async () => (await holdings(t, recipients, message.id)).entries === recipients.length, {
      what: 'an entry for every recipient',
      timeoutMs: 60_000,
    });
    const done = await holdings(t, recipients, message.id);
    expect(done).toEqual({ conversations: 999, entries: 999, unread: Array(999).fill(1) });
    await eventually(async () => (await jobOf(job))!.pending === false, { what: 'the fan-out job finished', timeoutMs: 60_000 });
    expect((await jobOf(job))!.cursor).toBe(999 + (24 - (999 % 24)));

    // When the job is delivered again from the start (a redelivered queue message after its progress was lost)
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.job.key({ acct: t.accountId, subject: job.subject }),
        UpdateExpression: 'SET progress = :zero, lease_owner = :chain, lease_until = :until, gsi2pk = :pending, gsi2sk = :due',
        ExpressionAttributeValues: {
          ':zero': 0,
          ':chain': 'redelivered',
          ':until': Date.now() + LEASE_MS,
          ':pending': keys.pendingJobs.partition(),
          ':due': keys.pendingJobs.sortKey({ ms: Date.now() + LEASE_MS }),
        },
      }),
    );
    await new SQSClient({ endpoint: process.env.AWS_ENDPOINT_URL_SQS, region: 'us-east-1' }).send(
      new SendMessageCommand({
        QueueUrl: process.env.DELIVERY_QUEUE_URL,
        MessageBody: JSON.stringify({ kind: 'fanout', accountId: t.accountId, subject: job.subject, chain: 'redelivered' }),
      }),
    );
    // Then the worker goes through every recipient again (its record leaves the pending index once more)
    await eventually(async () => (await jobOf(job))!.pending === false, { what: 'the fan-out job finished', timeoutMs: 60_000 });
    // And nothing is delivered twice: one entry each, unread still 1
    expect(await holdings(t, recipients, message.id)).toEqual(done);
  });
});
