import { afterEach, describe, expect, it } from 'vitest';
import { ValidatorConfigError, resetValidatorConfig, validateEmail, validatorConfig } from '#shared/email/validator/index';
import { readValidatorConfig } from '#shared/email/validator/config';
import { TtlCache } from '#shared/email/validator/ttl-cache';
import { eventually } from '../steps/eventually.ts';

describe('validator config', () => {
  const savedProbe = process.env.SMTP_PROBE;
  afterEach(() => {
    if (savedProbe === undefined) delete process.env.SMTP_PROBE;
    else process.env.SMTP_PROBE = savedProbe;
    resetValidatorConfig();
  });

  it('has safe defaults', () => {
    expect(readValidatorConfig({})).toEqual({
      dnsServers: undefined,
      dnsTimeoutMs: 2000,
      dnsTries: 3,
      smtpProbe: 'off',
      smtpPort: 25,
      smtpTimeoutMs: 3000,
      smtpProxy: undefined,
      smtpHeloName: 'localhost',
      smtpMailFrom: '',
      smtpMaxConnectionsPerHost: 2,
      smtpRetryFirstSeconds: 60,
      smtpRetryGiveUpSeconds: 900,
      allowPrivateMx: false,
      cacheTtlMs: 300_000,
    });
  });

  it('reads every setting', () => {
    expect(
      readValidatorConfig({
        DNS_SERVERS: '127.0.0.1:5300, 10.0.0.2,[::1]:53',
        DNS_TIMEOUT_MS: '500',
        DNS_TRIES: '2',
        SMTP_PROBE: 'TCP',
        SMTP_PORT: '2525',
        SMTP_TIMEOUT_MS: '300',
        SMTP_PROXY: 'socks5://proxy.internal:1080',
        SMTP_HELO_NAME: 'verify.example.com',
        SMTP_MAIL_FROM: 'bounce@verify.example.com',
        SMTP_MAX_CONNECTIONS_PER_HOST: '4',
        SMTP_RETRY_FIRST_SECONDS: '30',
        SMTP_RETRY_GIVE_UP_SECONDS: '600',
        ALLOW_PRIVATE_MX: 'true',
        VALIDATION_CACHE_TTL_SECONDS: '0',
      }),
    ).toEqual({
      dnsServers: ['127.0.0.1:5300', '10.0.0.2', '[::1]:53'],
      dnsTimeoutMs: 500,
      dnsTries: 2,
      smtpProbe: 'tcp',
      smtpPort: 2525,
      smtpTimeoutMs: 300,
      smtpProxy: { host: 'proxy.internal', port: 1080 },
      smtpHeloName: 'verify.example.com',
      smtpMailFrom: 'bounce@verify.example.com',
      smtpMaxConnectionsPerHost: 4,
      smtpRetryFirstSeconds: 30,
      smtpRetryGiveUpSeconds: 600,
      allowPrivateMx: true,
      cacheTtlMs: 0,
    });
  });

  it.each([
    [{ SMTP_PROBE: 'maybe' }, "SMTP_PROBE must be one of 'off', 'tcp', 'rcpt', got 'maybe'"],
    [{ SMTP_MAX_CONNECTIONS_PER_HOST: '0' }, "SMTP_MAX_CONNECTIONS_PER_HOST must be an integer from 1 to 20, got '0'"],
    [{ SMTP_HELO_NAME: 'bad name!' }, "SMTP_HELO_NAME must be a host name or an address literal like '[192.0.2.1]', got 'bad name!'"],
    [
      { SMTP_MAIL_FROM: '<probe@example.com>' },
      "SMTP_MAIL_FROM must be an address like 'verify@example.com' (or empty for '<>'), got '<probe@example.com>'",
    ],
    [{ SMTP_RETRY_FIRST_SECONDS: '1000' }, "SMTP_RETRY_FIRST_SECONDS must be an integer from 1 to 900, got '1000'"],
    [{ DNS_TRIES: '0' }, "DNS_TRIES must be an integer from 1 to 10, got '0'"],
    [{ DNS_TIMEOUT_MS: '2s' }, "DNS_TIMEOUT_MS must be an integer from 1 to 60000, got '2s'"],
    [{ SMTP_PORT: '70000' }, "SMTP_PORT must be an integer from 1 to 65535, got '70000'"],
    [{ ALLOW_PRIVATE_MX: 'yes' }, "ALLOW_PRIVATE_MX must be 'true' or 'false', got 'yes'"],
    [{ SMTP_PROXY: 'http://proxy:8080' }, "SMTP_PROXY must look like 'socks5://host:port', got 'http://proxy:8080'"],
    [{ SMTP_PROXY: 'socks5://proxy' }, "SMTP_PROXY must look like 'socks5://host:port', got 'socks5://proxy'"],
    [
      { DNS_SERVERS: '127.0.0.1:53,dns.google' },
      "DNS_SERVERS must be a comma-separated list of 'ip' or 'ip:port' ('[ipv6]:port'), got 'dns.google' in '127.0.0.1:53,dns.google'",
    ],
    [
      { DNS_SERVERS: '1.2.3.4:0' },
      "DNS_SERVERS must be a comma-separated list of 'ip' or 'ip:port' ('[ipv6]:port'), got '1.2.3.4:0' in '1.2.3.4:0'",
    ],
    [{ VALIDATION_CACHE_TTL_SECONDS: '-1' }, "VALIDATION_CACHE_TTL_SECONDS must be an integer from 0 to 86400, got '-1'"],
  ])('rejects %j', (env, message) => {
    expect(() => readValidatorConfig(env)).toThrow(new ValidatorConfigError(message));
  });

  it('fails at first use, and is read once until reset', async () => {
    process.env.SMTP_PROBE = 'maybe';
    resetValidatorConfig();
    await expect(validateEmail('a@example.com')).rejects.toThrow(/SMTP_PROBE must be one of/);

    process.env.SMTP_PROBE = 'off';
    resetValidatorConfig();
    const first = validatorConfig();
    process.env.SMTP_PROBE = 'tcp';
    expect(validatorConfig()).toBe(first); // not re-read
    resetValidatorConfig();
    expect(validatorConfig().smtpProbe).toBe('tcp');
  });
});

describe('TtlCache', () => {
  it('shares one in-flight promise and keeps the value for the TTL', async () => {
    const cache = new TtlCache<number>();
    let calls = 0;
    const compute = async () => ++calls;
    const [a, b] = await Promise.all([cache.remember('k', 60_000, compute), cache.remember('k', 60_000, compute)]);
    expect([a, b, calls]).toEqual([1, 1, 1]);
    expect(await cache.remember('k', 60_000, compute)).toBe(1);
  });

  it('forgets rejections and values kept for 0 ms', async () => {
    const cache = new TtlCache<number>();
    await expect(cache.remember('k', 60_000, () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await Promise.resolve();
    expect(cache.size).toBe(0);
    await cache.remember(
      'k',
      60_000,
      async () => 1,
      () => 0,
    );
    await Promise.resolve();
    expect(cache.size).toBe(0);
  });

  it('expires after the TTL and bounds its size', async () => {
    const cache = new TtlCache<number>(2);
    await cache.remember('a', 1, async () => 1);
    await eventually(() => !cache.has('a'), { what: "the 1 ms entry of 'a' expired", intervalMs: 1 });
    expect(await cache.remember('a', 1, async () => 2)).toBe(2);
    await cache.remember('b', 60_000, async () => 1);
    await cache.remember('c', 60_000, async () => 1);
    expect(cache.size).toBe(2);
  });
});
