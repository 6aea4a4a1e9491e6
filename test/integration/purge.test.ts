import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { resetConfig } from '#shared/config';
import { LEASE_MS } from '#shared/data/jobs';
import { handler as sweeper } from '#functions/workers/sweeper';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationMessageBatch } from '#shared/data/messages';
import { deleteConversation } from '#shared/messaging/conversations';
import { startWorkers } from '../../scripts/local/runtime.ts';
import { aTenant, conversationWithMessages, type Tenant } from '../steps/given.ts';
import { eventually } from '../steps/eventually.ts';
import { jobOf, timePasses } from '../steps/jobs.ts';

const ownerOf = (t: Tenant) => ({ accountId: t.accountId, contactId: t.userContactId });
const jobFor = (t: Tenant, conversationId: string) => ({ accountId: t.accountId, subject: `CONV#${conversationId}` });
/** Messages left to purge (each has a message item and a locator). */
const messagesLeft = async (t: Tenant, conversationId: string, limit: number) =>
  (await conversationMessageBatch(ownerOf(t), conversationId, limit)).keys.length / 2;

// The purge worker polls the purge queue for the whole file, as Lambda's event source mapping would.
let workers: ReturnType<typeof startWorkers>;
beforeAll(() => {
  workers = startWorkers(process.env as Record<string, string>, { waitSeconds: 1 });
});
afterAll(() => workers.stop());

/** Deleting a conversation with more messages than one invocation may delete, through the real queue and worker. */
describe('conversation purge against DynamoDB Local and the SQS emulator', () => {
  it('continues past the inline budget from the purge queue until no message is left', async () => {
    const t = await aTenant();
    const conversationId = await conversationWithMessages(t, 450);
    // A deadline already passed: one batch inline, the rest must go through the queue.
    await deleteConversation({ accountId: t.accountId, contactId: t.userContactId }, conversationId, Date.now() - 1);
    expect(await messagesLeft(t, conversationId, 500)).toBeGreaterThan(0);
    await eventually(async () => (await messagesLeft(t, conversationId, 1)) === 0, { what: 'every message purged' });
  });

  it('finishes inline when the budget allows, without the queue', async () => {
    const t = await aTenant();
    const conversationId = await conversationWithMessages(t, 120);
    await deleteConversation({ accountId: t.accountId, contactId: t.userContactId }, conversationId, Date.now() + 10_000);
    expect(await messagesLeft(t, conversationId, 1)).toBe(0);
  });

  it('drops a malformed job instead of retrying it forever', async () => {
    const sqs = new SQSClient({});
    await sqs.send(new SendMessageCommand({ QueueUrl: process.env.PURGE_QUEUE_URL!, MessageBody: 'not json' }));
    const t = await aTenant();
    const conversationId = await conversationWithMessages(t, 150);
    await deleteConversation({ accountId: t.accountId, contactId: t.userContactId }, conversationId, Date.now() - 1);
    // The worker keeps going: the good job behind the bad one completes.
    await eventually(async () => (await messagesLeft(t, conversationId, 1)) === 0, { what: 'every message purged' });
    sqs.destroy();
  });
});

describe('unfinished purges', () => {
  it('are finished by the sweeper when queueing failed, and their record is dropped only after the settle time', async () => {
    const t = await aTenant();
    const conversationId = await conversationWithMessages(t, 150);
    const job = jobFor(t, conversationId);
    const queueUrl = process.env.PURGE_QUEUE_URL!;
    process.env.PURGE_QUEUE_URL = `${queueUrl}-that-does-not-exist`;
    resetConfig();
    try {
      // One batch inline, then queueing fails: the delete itself still succeeds.
      await deleteConversation({ accountId: t.accountId, contactId: t.userContactId }, conversationId, Date.now() - 1);
    } finally {
      process.env.PURGE_QUEUE_URL = queueUrl;
      resetConfig();
    }
    expect(await messagesLeft(t, conversationId, 500)).toBe(50);
    expect(await jobOf(job)).toMatchObject({ pending: true });

    // A few minutes later the sweeper finds it; by then the settle time has passed too.
    await timePasses(job, LEASE_MS + 1000);
    const { jobs } = await sweeper();
    expect(jobs).toBeGreaterThanOrEqual(1);
    await eventually(async () => (await jobOf(job)) === undefined, { what: 'the purge record dropped' });
    expect(await messagesLeft(t, conversationId, 1)).toBe(0);
  });

  it('keep their record after a pass within the settle time, for a final pass later', async () => {
    const t = await aTenant();
    const conversationId = await conversationWithMessages(t, 10);
    await deleteConversation({ accountId: t.accountId, contactId: t.userContactId }, conversationId, Date.now() + 10_000);
    expect(await messagesLeft(t, conversationId, 1)).toBe(0);
    // Let go by its chain, due again once the settle time has passed
    const record = await jobOf(jobFor(t, conversationId));
    expect(record).toMatchObject({ pending: true });
    expect(record!.holder).toBeUndefined();
  });
});
