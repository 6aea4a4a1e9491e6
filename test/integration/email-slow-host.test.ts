import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateJob } from '#shared/email/processing';
import { resetValidatorConfig } from '#shared/email/validator/index';
import type { ValidationJob } from '#shared/email/work';
import { withQueueGrants } from '../../scripts/local/queue-grants.ts';
import { emailEnv, standardZones, type EmailEnv } from '../steps/email-env.ts';
import { startMailboxServer, type MailboxServer } from '../steps/smtp-mailboxes.ts';

/**
 * A mail host that answers slowly, with many of a batch's addresses queued
 * for its few sessions, against a healthy one in the same batch: the run
 * stops waiting at its deadline, the healthy host's answers are recorded,
 * and the slow host's unfinished addresses go back on the queue as a new
 * message, costing them no attempt. Both hosts listen on loopback (the slow
 * one on 127.0.0.2), at the same SMTP_PORT.
 */
describe('a validation run with a slow mail host in its batch', () => {
  let env: EmailEnv | undefined;
  let slow: MailboxServer;
  let fast: MailboxServer;
  const saved = { ...process.env };
  const sqs = new SQSClient({});

  beforeAll(async () => {
    const mx = (domain: string, address: string) => ({
      [domain]: { mx: [{ priority: 10, exchange: `mx.${domain}` }] },
      [`mx.${domain}`]: { a: [address] },
    });
    // No workers: the test reads what the run puts back on the queue.
    env = await emailEnv({ ...standardZones, ...mx('slow.test', '127.0.0.2'), ...mx('fast.test', '127.0.0.1') }, { workers: false });
    slow = await startMailboxServer({ 'slow.test': { catchAll: true } }, { host: '127.0.0.2', latencyMs: () => 400 });
    fast = await startMailboxServer({ 'fast.test': { mailboxes: { jane: 'exists' } } }, { host: '127.0.0.1', port: slow.port });
    Object.assign(process.env, {
      SMTP_PROBE: 'rcpt',
      SMTP_PORT: String(slow.port),
      SMTP_TIMEOUT_MS: '3000',
      SMTP_MAX_CONNECTIONS_PER_HOST: '1',
      ALLOW_PRIVATE_MX: 'true',
    });
    resetValidatorConfig();
  });
  afterAll(async () => {
    await env?.stop();
    await slow?.stop();
    await fast?.stop();
    process.env = saved;
    resetValidatorConfig();
  });

  it('records what finished by its deadline and puts the rest back on the queue, with no attempt spent', async () => {
    // Given a job of 8 addresses at the slow host (one session, 400 ms an answer: seconds each) and one at the fast host
    const accountId = `acct_slow_${Date.now()}`;
    const addresses = [...Array.from({ length: 8 }, (_, i) => `user${i}@slow.test`), 'jane@fast.test'];
    const now = Math.floor(Date.now() / 1000);
    const job: ValidationJob = {
      accountId,
      emailIds: addresses.map((_, i) => 9_100_000_000 + i),
      addresses,
      seqs: addresses.map((_, i) => i),
      createdAt: addresses.map(() => now),
      listId: null,
    };
    // When a run of the worker (with its queue grants) validates it with 2 s to go
    const { done, retry } = await withQueueGrants('workers/validate-emails', () =>
      validateJob(accountId, job, false, async () => true, Date.now() + 2_000),
    );
    // Then the fast host's address is done, deliverable, and no failure asks for the queue's redelivery
    expect(retry).toBe(false);
    const finished = new Map(done.map((d) => [d.email.email, d.outcome]));
    expect(finished.get('jane@fast.test')).toMatchObject({ status: 'completed', result: { deliverability: 'deliverable' } });
    // And none is recorded as an error, while some of the slow host's were still running
    expect([...finished.values()].filter((o) => o.status !== 'completed')).toEqual([]);
    const unfinished = addresses.filter((a) => !finished.has(a));
    expect(unfinished.length).toBeGreaterThan(0);
    expect(unfinished.every((a) => a.endsWith('@slow.test'))).toBe(true);
    // And exactly those are back on the queue, as a new message of the same account
    const [message] =
      (await sqs.send(new ReceiveMessageCommand({ QueueUrl: process.env.VALIDATION_QUEUE_URL!, WaitTimeSeconds: 2 }))).Messages ?? [];
    const requeued = JSON.parse(message!.Body!) as ValidationJob;
    expect(requeued.accountId).toBe(accountId);
    expect([...requeued.addresses!].sort()).toEqual([...unfinished].sort());
  }, 30_000);
});
