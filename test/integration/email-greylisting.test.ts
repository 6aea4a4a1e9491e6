import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resetValidatorConfig } from '#shared/email/validator/index';
import { aTenant, type Tenant } from '../steps/given.ts';
import { emailEnv, standardZones, type EmailEnv } from '../steps/email-env.ts';
import { eventually } from '../steps/eventually.ts';
import { startMailboxServer, type MailboxServer } from '../steps/smtp-mailboxes.ts';
import { apiClient, type ApiClient } from '../steps/when.ts';

/**
 * Greylisting end to end (SMTP_PROBE=rcpt): the request answers `pending`,
 * the worker puts the email back on the queue with a delay and asks again,
 * and gives up as `unknown` once the address has waited
 * SMTP_RETRY_GIVE_UP_SECONDS. Delays are shortened to a second here.
 */
describe('greylisting through the worker', () => {
  let env: EmailEnv | undefined;
  let api: ApiClient;
  let t: Tenant;
  let smtp: MailboxServer;
  const saved = { ...process.env };

  beforeAll(async () => {
    const mx = (domain: string) => ({
      [domain]: { mx: [{ priority: 10, exchange: `mx.${domain}` }] },
      [`mx.${domain}`]: { a: ['127.0.0.1'] },
    });
    env = await emailEnv({ ...standardZones, ...mx('grey.test'), ...mx('always-grey.test') });
    smtp = await startMailboxServer({
      // Asked once inline and once by the worker's first attempt: the third ask (after the delay) is answered.
      'grey.test': { mailboxes: { jane: 'exists' }, greylistTimes: 2 },
      'always-grey.test': { mailboxes: { jane: 'exists' }, greylistTimes: 1_000 },
    });
    Object.assign(process.env, {
      SMTP_PROBE: 'rcpt',
      SMTP_PORT: String(smtp.port),
      SMTP_TIMEOUT_MS: '2000',
      SMTP_RETRY_FIRST_SECONDS: '1',
      SMTP_RETRY_GIVE_UP_SECONDS: '4',
    });
    resetValidatorConfig();
    api = await apiClient('email', 'handler');
    t = await aTenant();
  });
  afterAll(async () => {
    await env?.stop();
    await smtp?.stop();
    process.env = saved;
    resetValidatorConfig();
  });

  const create = (address: string) => api.call('POST', '/api/v1/emails', { token: t.token, json: { emails: [address] } });
  const finished = (id: number) =>
    eventually(
      async () => {
        const res = await api.call('GET', `/api/v1/email/${id}`, { token: t.token });
        return res.body.status === 'completed' && res.body;
      },
      { what: `email ${id} completed`, timeoutMs: 30_000 },
    );

  it('answers pending inline, then deliverable after a delayed retry', async () => {
    const res = await create('jane@grey.test');
    expect(res.status).toBe(201);
    expect(res.body.emails[0]).toMatchObject({ status: 'pending', deliverability: 'unknown' });
    const email = await finished(res.body.emails[0].id);
    expect(email).toMatchObject({ deliverability: 'deliverable', is_catch_all: false, is_valid: true });
    expect(smtp.recipients().filter((r) => r === 'jane@grey.test').length).toBe(3);
    expect(smtp.dataCommands()).toBe(0);
  });

  it('gives up as unknown once the address has waited SMTP_RETRY_GIVE_UP_SECONDS', async () => {
    const res = await create('jane@always-grey.test');
    const email = await finished(res.body.emails[0].id);
    expect(email).toMatchObject({ deliverability: 'unknown', is_valid: true, status: 'completed' });
    // Asked inline, then again after each delay: more than twice, and not in a tight loop.
    const asked = smtp.recipients().filter((r) => r === 'jane@always-grey.test').length;
    expect(asked).toBeGreaterThan(2);
    expect(asked).toBeLessThan(10);
  });
});
