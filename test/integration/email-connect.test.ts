import net from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { resetValidatorConfig, validateEmail, type ValidationResult } from '#shared/email/validator/index';
import { MAX_PROBED_ADDRESSES, MAX_PROBED_HOSTS } from '#shared/email/validator/mail-domain';
import { eventually } from '../steps/eventually.ts';
import { scopedEnv } from '../steps/scoped-env.ts';
import { startDnsServer, type DnsServer } from '../../scripts/local/dns-server.ts';
import { refusedPort, startSmtpPair, startSmtpServer, type SmtpListener } from '../steps/smtp-servers.ts';
import { startSocksProxy, type SocksProxy } from '../steps/socks-proxy.ts';

/**
 * The SMTP probe (SMTP_PROBE=tcp) against listeners on loopback. Every MX
 * host shares SMTP_PORT, so each test starts the listener it needs and points
 * SMTP_PORT at it; the two-host test binds one port on 127.0.0.1 and 127.0.0.2.
 */
const TIMEOUT_MS = 400;

/** 15 MX hosts (listed out of preference order), each with three loopback addresses. */
const MANY = 15;
const manyMx = {
  'many-mx.test': {
    mx: Array.from({ length: MANY }, (_, i) => MANY - i).map((n) => ({ priority: n * 10, exchange: `mx${n}.many-mx.test` })),
  },
  ...Object.fromEntries(
    Array.from({ length: MANY }, (_, i) => i + 1).map((n) => [`mx${n}.many-mx.test`, { a: [1, 2, 3].map((k) => `127.0.${k}.${n}`) }]),
  ),
};
let dns: DnsServer;
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  dns = await startDnsServer({
    'one-mx.test': { mx: [{ priority: 10, exchange: 'mx.one-mx.test' }] },
    'mx.one-mx.test': { a: ['127.0.0.1'] },
    'two-mx.test': {
      mx: [
        { priority: 10, exchange: 'mx1.two-mx.test' },
        { priority: 20, exchange: 'mx2.two-mx.test' },
      ],
    },
    'mx1.two-mx.test': { a: ['127.0.0.1'] },
    'mx2.two-mx.test': { a: ['127.0.0.2'] },
    'implicit.test': { a: ['127.0.0.1'] },
    'two-addresses.test': { mx: [{ priority: 10, exchange: 'mx.two-addresses.test' }] },
    'mx.two-addresses.test': { a: ['127.0.0.2', '127.0.0.1'] },
    'metadata.test': { mx: [{ priority: 10, exchange: 'mx.metadata.test' }] },
    'mx.metadata.test': { a: ['169.254.169.254'] },
    ...manyMx,
  });
});

afterAll(async () => {
  await dns?.stop();
});

// Environment changes are undone and the validator re-reads them.
const scoped = scopedEnv(resetValidatorConfig);
const configure = scoped.set;

beforeEach(() => {
  configure({
    DNS_SERVERS: dns.address,
    DNS_TIMEOUT_MS: '500',
    DNS_TRIES: '2',
    SMTP_PROBE: 'tcp',
    SMTP_TIMEOUT_MS: String(TIMEOUT_MS),
    SMTP_PROXY: '',
    ALLOW_PRIVATE_MX: 'true',
  });
});

afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()));
  scoped.restore();
});

async function listen(listener: Promise<SmtpListener>): Promise<SmtpListener> {
  const started = await listener;
  stops.push(started.stop);
  return started;
}

async function completed(address: string): Promise<ValidationResult> {
  const outcome = await validateEmail(address);
  if (outcome.status !== 'completed') throw new Error(`expected completed, got error: ${outcome.reason}`);
  return outcome.result;
}

/** The probe's QUIT reaches the host after the validation has its answer: it is waited for. */
const quits = (smtp: { quits: () => number }, count: number) =>
  eventually(() => smtp.quits() >= count, { what: `${count} QUIT at the mail host`, intervalMs: 10 });

describe('SMTP_PROBE=tcp', () => {
  it('a host that greets with 220 is connectable, and is told QUIT', async () => {
    const smtp = await listen(startSmtpServer('answering'));
    configure({ SMTP_PORT: String(smtp.port) });
    const result = await completed('user@one-mx.test');
    expect(result).toMatchObject({ is_valid: true, can_connect: true, mx_record_count: 1, connectable_mx_record_count: 1 });
    expect(smtp.connections()).toBe(1);
    await quits(smtp, 1);
    expect(smtp.quits()).toBe(1);
  });

  it('a refused connection is not connectable (the domain is still valid)', async () => {
    configure({ SMTP_PORT: String(await refusedPort()) });
    const started = Date.now();
    const result = await completed('user@one-mx.test');
    expect(result).toMatchObject({ is_valid: true, can_connect: false, connectable_mx_record_count: 0 });
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS); // refused fails fast
  });

  it('a silent host is not connectable, within about SMTP_TIMEOUT_MS', async () => {
    const smtp = await listen(startSmtpServer('silent'));
    configure({ SMTP_PORT: String(smtp.port) });
    const started = Date.now();
    const result = await completed('user@one-mx.test');
    const elapsed = Date.now() - started;
    expect(result).toMatchObject({ is_valid: true, can_connect: false });
    expect(smtp.connections()).toBe(1);
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
    expect(elapsed).toBeLessThan(TIMEOUT_MS * 2);
  });

  it('two MX hosts, one answering and one silent: probed in parallel, one connectable', async () => {
    const [answering, silent] = await startSmtpPair('answering', 'silent');
    stops.push(answering.stop, silent.stop);
    configure({ SMTP_PORT: String(answering.port) });
    const started = Date.now();
    const result = await completed('user@two-mx.test');
    const elapsed = Date.now() - started;
    expect(result).toMatchObject({ is_valid: true, mx_record_count: 2, connectable_mx_record_count: 1, can_connect: true });
    expect(result.score).toBe(95); // not every host connectable
    expect([answering.connections(), silent.connections()]).toEqual([1, 1]);
    expect(elapsed).toBeLessThan(TIMEOUT_MS * 2); // one timeout, not two
  });

  it('two silent MX hosts cost one timeout, not two (the probes run in parallel)', async () => {
    const [first, second] = await startSmtpPair('silent', 'silent');
    stops.push(first.stop, second.stop);
    configure({ SMTP_PORT: String(first.port) });
    const started = Date.now();
    const result = await completed('user@two-mx.test');
    const elapsed = Date.now() - started;
    expect(result).toMatchObject({ is_valid: true, mx_record_count: 2, connectable_mx_record_count: 0, can_connect: false });
    expect([first.connections(), second.connections()]).toEqual([1, 1]);
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
    expect(elapsed).toBeLessThan(TIMEOUT_MS * 1.9);
  });

  it('tries the next address of a host when the first refuses', async () => {
    const smtp = await listen(startSmtpServer('answering', '127.0.0.1'));
    configure({ SMTP_PORT: String(smtp.port) }); // nothing listens on 127.0.0.2 at that port
    const result = await completed('user@two-addresses.test');
    expect(result.can_connect).toBe(true);
  });

  it('implicit MX: the domain host decides can_connect; no MX record is counted', async () => {
    const smtp = await listen(startSmtpServer('answering'));
    configure({ SMTP_PORT: String(smtp.port) });
    const result = await completed('user@implicit.test');
    expect(result).toMatchObject({ is_valid: true, mx_record_count: 0, connectable_mx_record_count: 0, can_connect: true });
  });

  it('caches the probe: many addresses on one domain, one connection', async () => {
    const smtp = await listen(startSmtpServer('answering'));
    configure({ SMTP_PORT: String(smtp.port) });
    const outcomes = await Promise.all(Array.from({ length: 50 }, (_, i) => validateEmail(`u${i}@one-mx.test`)));
    expect(outcomes.every((o) => o.status === 'completed' && o.result.can_connect)).toBe(true);
    expect(smtp.connections()).toBe(1);
  });

  it('never probes a private address without ALLOW_PRIVATE_MX', async () => {
    const smtp = await listen(startSmtpServer('answering'));
    configure({ SMTP_PORT: String(smtp.port), ALLOW_PRIVATE_MX: 'false' });
    const result = await completed('user@one-mx.test');
    expect(result).toMatchObject({ is_valid: true, can_connect: false });
    expect(smtp.connections()).toBe(0);
  });

  it('contacts at most 10 MX hosts of a domain, lowest preference first, at no more than 2 addresses each', async () => {
    // Hangs up at once, so every address the probe tries is seen; bound to all of 127/8 to see which.
    const reached: string[] = [];
    const server = net.createServer((socket) => {
      reached.push(socket.localAddress!.replace(/^::ffff:/, ''));
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', () => resolve()));
    stops.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    configure({ SMTP_PORT: String((server.address() as net.AddressInfo).port) });
    dns.resetQueries();

    const outcome = await validateEmail('user@many-mx.test');
    expect(outcome).toMatchObject({ status: 'completed', result: { mx_record_count: MANY, connectable_mx_record_count: 0 } });
    const expected = Array.from({ length: MAX_PROBED_HOSTS }, (_, i) => i + 1).flatMap((n) => [`127.0.1.${n}`, `127.0.2.${n}`]);
    expect(MAX_PROBED_ADDRESSES).toBe(2);
    expect(reached.sort()).toEqual(expected.sort());
    // Hosts past the limit are not even looked up.
    for (let n = MAX_PROBED_HOSTS + 1; n <= MANY; n++) expect(dns.count(`mx${n}.many-mx.test`)).toBe(0);
    expect(outcome.status === 'completed' && outcome.problems).toContain(
      `${MANY - MAX_PROBED_HOSTS} more MX host(s) of many-mx.test not probed (limit 10)`,
    );
  });

  it('without the probe, every MX host counts (no connection is made)', async () => {
    configure({ SMTP_PROBE: 'off' });
    const result = await completed('user@many-mx.test');
    expect(result).toMatchObject({ mx_record_count: MANY, connectable_mx_record_count: MANY, can_connect: true });
  });

  it('never probes the metadata address, not even with ALLOW_PRIVATE_MX', async () => {
    configure({ SMTP_PORT: '25', ALLOW_PRIVATE_MX: 'true' });
    const result = await completed('user@metadata.test');
    expect(result).toMatchObject({ is_valid: true, can_connect: false });
  });
});

describe('SMTP_PROXY (SOCKS5)', () => {
  let proxy: SocksProxy;
  beforeEach(async () => {
    proxy = await startSocksProxy();
    stops.push(proxy.stop);
  });

  it('probes through the proxy, handing it the vetted address', async () => {
    const smtp = await listen(startSmtpServer('answering'));
    configure({ SMTP_PORT: String(smtp.port), SMTP_PROXY: proxy.url });
    const result = await completed('user@one-mx.test');
    expect(result).toMatchObject({ can_connect: true, connectable_mx_record_count: 1 });
    expect(proxy.destinations()).toEqual([{ host: '127.0.0.1', port: smtp.port }]);
    await quits(smtp, 1);
    expect(smtp.quits()).toBe(1);
  });

  it('a host the proxy cannot reach is not connectable', async () => {
    const port = await refusedPort();
    configure({ SMTP_PORT: String(port), SMTP_PROXY: proxy.url });
    const result = await completed('user@one-mx.test');
    expect(result.can_connect).toBe(false);
    expect(proxy.destinations()).toEqual([{ host: '127.0.0.1', port }]);
  });

  it('a silent host behind the proxy times out within SMTP_TIMEOUT_MS', async () => {
    const smtp = await listen(startSmtpServer('silent'));
    configure({ SMTP_PORT: String(smtp.port), SMTP_PROXY: proxy.url });
    const started = Date.now();
    const result = await completed('user@one-mx.test');
    expect(result.can_connect).toBe(false);
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS * 2);
  });

  it('an unreachable proxy: not connectable, no hang', async () => {
    const smtp = await listen(startSmtpServer('answering'));
    configure({ SMTP_PORT: String(smtp.port), SMTP_PROXY: `socks5://127.0.0.1:${await refusedPort()}` });
    const result = await completed('user@one-mx.test');
    expect(result.can_connect).toBe(false);
    expect(smtp.connections()).toBe(0);
  });
});
