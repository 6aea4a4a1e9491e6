import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { currentProber, resetValidatorConfig, validateEmail, type ValidationResult } from '#shared/email/validator/index';
import type { ValidationOutcome } from '#shared/email/result';
import { scopedEnv } from '../steps/scoped-env.ts';
import { startDnsServer, type DnsServer } from '../../scripts/local/dns-server.ts';
import { startMailboxServer, type DomainBehaviour, type MailboxServer, type MailboxServerOptions } from '../steps/smtp-mailboxes.ts';
import { startSocksProxy } from '../steps/socks-proxy.ts';

/**
 * The mailbox probe (SMTP_PROBE=rcpt) against a real SMTP server on loopback
 * (the `smtp-server` package) configured per recipient domain. Every domain's
 * MX host resolves to 127.0.0.1; each test starts the server it needs and
 * points SMTP_PORT at it.
 */
const DOMAINS = ['mailboxes.test', 'catchall.test', 'grey.test', 'busy.test', 'm365.test'];

let dns: DnsServer;
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  dns = await startDnsServer({
    ...Object.fromEntries(
      DOMAINS.flatMap((d) => [
        [d, { mx: [{ priority: 10, exchange: `mx.${d}` }] }],
        [`mx.${d}`, { a: ['127.0.0.1'] }],
      ]),
    ),
    // A Microsoft 365 tenant: its MX host name is what the provider rule matches.
    'm365.test': { mx: [{ priority: 0, exchange: 'm365-test.mail.protection.outlook.com' }] },
    'm365-test.mail.protection.outlook.com': { a: ['127.0.0.1'] },
  });
});

afterAll(async () => {
  await dns?.stop();
});

const scoped = scopedEnv(resetValidatorConfig);
const configure = scoped.set;

beforeEach(() => {
  configure({
    DNS_SERVERS: dns.address,
    DNS_TIMEOUT_MS: '500',
    DNS_TRIES: '2',
    SMTP_PROBE: 'rcpt',
    SMTP_TIMEOUT_MS: '2000',
    SMTP_PROXY: '',
    SMTP_HELO_NAME: 'verifier.test',
    SMTP_MAIL_FROM: 'probe@verifier.test',
    SMTP_MAX_CONNECTIONS_PER_HOST: '',
    ALLOW_PRIVATE_MX: 'true',
  });
});

afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()));
  scoped.restore();
});

const behaviours: Record<string, DomainBehaviour> = {
  'mailboxes.test': { mailboxes: { jane: 'exists', gone: 'disabled', stuffed: 'full' } },
  'catchall.test': { catchAll: true },
  'grey.test': { mailboxes: { jane: 'exists' }, greylistTimes: 1 },
  'm365.test': { catchAll: true },
};

async function serve(options: MailboxServerOptions = {}, domains = behaviours): Promise<MailboxServer> {
  const server = await startMailboxServer(domains, options);
  stops.push(server.stop);
  configure({ SMTP_PORT: String(server.port) });
  return server;
}

async function completed(address: string): Promise<ValidationResult> {
  const outcome = await validateEmail(address);
  if (outcome.status !== 'completed') throw new Error(`expected completed, got ${outcome.status}: ${outcome.reason}`);
  return outcome.result;
}

describe('SMTP_PROBE=rcpt', () => {
  it('given mailboxes that exist, are unknown, disabled and full: deliverable, undeliverable, undeliverable, risky; never DATA', async () => {
    const smtp = await serve();
    const [jane, nobody, gone, stuffed] = (await Promise.all(
      ['jane', 'nobody-at-all-1234', 'gone', 'stuffed'].map((local) => completed(`${local}@mailboxes.test`)),
    )) as [ValidationResult, ValidationResult, ValidationResult, ValidationResult];
    expect(jane).toMatchObject({ deliverability: 'deliverable', is_catch_all: false, is_valid: true, can_connect: true, score: 100 });
    expect(nobody).toMatchObject({ deliverability: 'undeliverable', is_catch_all: false, is_valid: false });
    expect(nobody.score).toBeLessThanOrEqual(10);
    expect(gone).toMatchObject({ deliverability: 'undeliverable', is_valid: false });
    expect(stuffed).toMatchObject({ deliverability: 'risky', is_valid: true });
    expect(stuffed.score).toBeLessThanOrEqual(50);
    expect(smtp.dataCommands()).toBe(0);
    // One catch-all test for the domain, then each address once, in one session.
    const recipients = smtp.recipients();
    expect(recipients.filter((r) => r.startsWith('no-such-mailbox-'))).toHaveLength(1);
    expect(recipients).toHaveLength(5);
    expect(smtp.sessions()).toBeLessThanOrEqual(2);
  });

  it('given a catch-all domain: risky, is_catch_all true', async () => {
    await serve();
    expect(await completed('anyone@catchall.test')).toMatchObject({ deliverability: 'risky', is_catch_all: true, is_valid: true });
  });

  it('given a Microsoft 365 tenant accepting every address: unknown, not a catch-all verdict', async () => {
    await serve();
    expect(await completed('jane@m365.test')).toMatchObject({ deliverability: 'unknown', is_catch_all: null, is_valid: true });
  });

  it('given greylisting: the first answer is deferred, a later attempt is deliverable', async () => {
    await serve();
    const first: ValidationOutcome = await validateEmail('jane@grey.test');
    expect(first.status).toBe('deferred');
    if (first.status === 'deferred') expect(first.result.deliverability).toBe('unknown');
    expect(await completed('jane@grey.test')).toMatchObject({ deliverability: 'deliverable', is_catch_all: false });
  });

  it('given a server that blocks the verifier at MAIL FROM: unknown, not undeliverable', async () => {
    await serve({}, { 'mailboxes.test': { mailboxes: { jane: 'exists' }, blockAtMailFrom: true } });
    expect(await completed('jane@mailboxes.test')).toMatchObject({ deliverability: 'unknown', is_valid: true, is_catch_all: null });
  });

  it('given a server that refuses the connection with 554: unknown, still connectable', async () => {
    await serve({ refuseConnections: true });
    expect(await completed('jane@mailboxes.test')).toMatchObject({ deliverability: 'unknown', is_valid: true, can_connect: true });
  });

  it('given no server at all: unknown and not connectable', async () => {
    const smtp = await serve();
    await smtp.stop();
    stops.pop();
    expect(await completed('jane@mailboxes.test')).toMatchObject({
      deliverability: 'unknown',
      can_connect: false,
      connectable_mx_record_count: 0,
    });
  });

  it('goes through SMTP_PROXY with the vetted address', async () => {
    const smtp = await serve();
    const proxy = await startSocksProxy();
    stops.push(proxy.stop);
    configure({ SMTP_PROXY: proxy.url });
    expect(await completed('jane@mailboxes.test')).toMatchObject({ deliverability: 'deliverable' });
    expect(proxy.destinations()).toEqual([{ host: '127.0.0.1', port: smtp.port }]);
  });

  it('uses STARTTLS when offered', async () => {
    const smtp = await serve({ starttls: true });
    expect(await completed('jane@mailboxes.test')).toMatchObject({ deliverability: 'deliverable' });
    expect(smtp.sessions()).toBe(1);
  });

  it.each([1, 2, 3])(
    'given 60 addresses of one domain and SMTP_MAX_CONNECTIONS_PER_HOST=%i: at most that many connections at once, at most 10 sessions',
    async (limit) => {
      const smtp = await serve({ latencyMs: () => 5 });
      configure({ SMTP_MAX_CONNECTIONS_PER_HOST: String(limit) });
      const results = await Promise.all(Array.from({ length: 60 }, (_, i) => completed(`user${i}@mailboxes.test`)));
      expect(results.every((r) => r.deliverability === 'undeliverable')).toBe(true);
      expect(smtp.maxConcurrent()).toBeLessThanOrEqual(limit);
      expect(smtp.maxConcurrent()).toBeGreaterThanOrEqual(1);
      expect(smtp.sessions()).toBeLessThanOrEqual(10);
      expect(currentProber()?.sessionsOpened).toBe(smtp.sessions());
      expect(smtp.dataCommands()).toBe(0);
    },
  );

  it('caches the catch-all result per domain: a second batch asks only for its addresses', async () => {
    const smtp = await serve();
    await completed('jane@mailboxes.test');
    await completed('gone@mailboxes.test');
    expect(smtp.recipients().filter((r) => r.startsWith('no-such-mailbox-'))).toHaveLength(1);
  });
});
