import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { resetValidatorConfig, validateEmail, type ValidationResult } from '#shared/email/validator/index';
import { scopedEnv } from '../steps/scoped-env.ts';
import { startDnsServer, type DnsServer } from '../../scripts/local/dns-server.ts';

/**
 * validateEmail against a real DNS server on loopback: MX, implicit MX, null
 * MX, NXDOMAIN, retries, timeouts, deadlines, caching and the SSRF guard.
 * SMTP_PROBE stays off here, so nothing connects anywhere: connectability is
 * DNS-level (the host resolves to an allowed address).
 */
let dns: DnsServer;

beforeAll(async () => {
  dns = await startDnsServer({
    'two-mx.test': {
      mx: [
        { priority: 10, exchange: 'mx1.two-mx.test' },
        { priority: 20, exchange: 'mx2.two-mx.test' },
      ],
    },
    'mx1.two-mx.test': { a: ['127.0.0.1'] },
    'mx2.two-mx.test': { a: ['127.0.0.2'], aaaa: ['::1'] },
    'public-mx.test': { mx: [{ priority: 10, exchange: 'mx.public-mx.test' }] },
    'mx.public-mx.test': { a: ['93.184.215.14'] }, // public, never contacted (probe off)
    'a-only.test': { a: ['127.0.0.1'] },
    'aaaa-only.test': { aaaa: ['2606:4700::1111'] },
    'null-mx.test': { nullMx: true, a: ['127.0.0.1'] },
    'empty.test': {}, // exists, no MX, no A/AAAA
    'gone.test': { nxdomain: true },
    'broken.test': { servfail: true },
    'flaky.test': { servfail: 2, mx: [{ priority: 10, exchange: 'mx1.two-mx.test' }] },
    'slow.test': { delayMs: 600, mx: [{ priority: 10, exchange: 'mx1.two-mx.test' }] },
    'refusing.test': { refused: true },
    'garbage.test': { malformed: true },
    'dangling-mx.test': {
      mx: [
        { priority: 10, exchange: 'missing.dangling-mx.test' },
        { priority: 20, exchange: 'mx1.two-mx.test' },
      ],
    },
    'lame-mx.test': { mx: [{ priority: 10, exchange: 'mx.lame.test' }] },
    'mx.lame.test': { servfail: true },
    'implicit-broken.test': { servfail: true, servfailTypes: ['A', 'AAAA'] }, // MX: NODATA
    'ssrf-loopback.test': { mx: [{ priority: 10, exchange: 'mx.ssrf-loopback.test' }] },
    'mx.ssrf-loopback.test': { a: ['127.0.0.1'] },
    'ssrf-metadata.test': { mx: [{ priority: 10, exchange: 'mx.ssrf-metadata.test' }] },
    'mx.ssrf-metadata.test': { a: ['169.254.169.254'] },
    'ssrf-metadata-v6.test': { mx: [{ priority: 10, exchange: 'mx.ssrf-metadata-v6.test' }] },
    'mx.ssrf-metadata-v6.test': { aaaa: ['fd00:ec2::254'] },
    'link-local.test': { aaaa: ['fe80::1'], a: ['169.254.10.20'] },
    'ssrf-mapped.test': { mx: [{ priority: 10, exchange: 'mx.ssrf-mapped.test' }] },
    'mx.ssrf-mapped.test': { aaaa: ['::ffff:10.0.0.1'] },
    'unspecified.test': { mx: [{ priority: 10, exchange: 'mx.unspecified.test' }] },
    'mx.unspecified.test': { a: ['0.0.0.0'] },
    'xn--r8jz45g.test': { mx: [{ priority: 5, exchange: 'mx1.two-mx.test' }] },
    ...Object.fromEntries(
      ['bulk-a', 'bulk-b', 'bulk-c', 'bulk-d'].flatMap((name) => [
        [`${name}.test`, { mx: [{ priority: 10, exchange: `mx.${name}.test` }] }],
        [`mx.${name}.test`, { a: ['127.0.0.1'] }],
      ]),
    ),
  });
});

afterAll(async () => {
  await dns?.stop();
});

// Environment changes are undone and the validator re-reads them.
const scoped = scopedEnv(resetValidatorConfig);
const configure = scoped.set;
afterEach(() => {
  scoped.restore();
});

beforeEach(() => {
  configure({
    DNS_SERVERS: dns.address,
    DNS_TIMEOUT_MS: '300',
    DNS_TRIES: '3',
    SMTP_PROBE: 'off',
    ALLOW_PRIVATE_MX: 'true',
    VALIDATION_CACHE_TTL_SECONDS: '300',
  });
  dns.resetQueries();
});

async function completed(address: string, options?: { deadline?: number }): Promise<ValidationResult> {
  const outcome = await validateEmail(address, options);
  if (outcome.status !== 'completed') throw new Error(`expected completed, got error: ${outcome.reason}`);
  return outcome.result;
}

describe('domains that accept mail', () => {
  it('MX records: valid, counted, connectable', async () => {
    const result = await completed('Jane.Doe+news@Two-MX.test');
    expect(result).toEqual({
      email: 'Jane.Doe+news@Two-MX.test',
      is_valid: true,
      score: 95, // everything but not_alias
      can_connect: true,
      mx_record_count: 2,
      connectable_mx_record_count: 2,
      is_username_generic: false,
      is_alias: true,
      is_gov: false,
      is_edu: false,
      is_mil: false,
      is_free: false,
      is_subdomain: false,
      canonical_email: 'Jane.Doe@two-mx.test',
      is_disposable: false,
      did_you_mean: null,
      is_catch_all: null, // the mailbox is not probed (SMTP_PROBE=off)
      deliverability: 'unknown',
    });
    expect(dns.count('two-mx.test', 'MX')).toBe(1);
    expect(dns.count('mx1.two-mx.test', 'A')).toBe(1);
    expect(dns.count('mx2.two-mx.test', 'AAAA')).toBe(1);
  });

  it('a public MX host is connectable without ALLOW_PRIVATE_MX', async () => {
    configure({ ALLOW_PRIVATE_MX: 'false' });
    const result = await completed('user@public-mx.test');
    expect(result).toMatchObject({ is_valid: true, can_connect: true, mx_record_count: 1, connectable_mx_record_count: 1 });
    expect(result.score).toBe(100);
  });

  it('no MX but an A record: implicit MX, valid with mx_record_count 0', async () => {
    const result = await completed('user@a-only.test');
    expect(result).toMatchObject({ is_valid: true, mx_record_count: 0, connectable_mx_record_count: 0, can_connect: true });
    // all_hosts_connectable holds (the domain host is), has_mx_records does not.
    expect(result.score).toBe(90);
    expect(dns.count('a-only.test', 'A')).toBe(1);
  });

  it('no MX but an AAAA record: implicit MX too', async () => {
    const result = await completed('user@aaaa-only.test');
    expect(result).toMatchObject({ is_valid: true, mx_record_count: 0, can_connect: true });
  });

  it('an MX host that does not exist is not connectable; the others still count', async () => {
    const result = await completed('user@dangling-mx.test');
    expect(result).toMatchObject({ is_valid: true, mx_record_count: 2, connectable_mx_record_count: 1, can_connect: true });
    expect(result.score).toBe(95); // not every host connectable
  });

  it('an MX host whose lookups keep failing is not connectable, and is asked again next time', async () => {
    const result = await completed('user@lame-mx.test');
    expect(result).toMatchObject({ is_valid: true, mx_record_count: 1, connectable_mx_record_count: 0, can_connect: false });
    expect(dns.count('mx.lame.test', 'A')).toBe(3);
    await completed('other@lame-mx.test');
    expect(dns.count('lame-mx.test', 'MX')).toBe(1); // the MX answer is cached
    expect(dns.count('mx.lame.test', 'A')).toBe(6); // the failed host lookup is not
  });

  it('an internationalized domain is looked up in its A-label form', async () => {
    const result = await completed('ユーザー+x@例え.test');
    expect(result).toMatchObject({ is_valid: true, mx_record_count: 1, canonical_email: 'ユーザー@例え.test', is_alias: true });
    expect(dns.count('xn--r8jz45g.test', 'MX')).toBe(1);
  });
});

describe('domains that do not accept mail (completed, not errors)', () => {
  it('null MX: invalid, its one record counted, never connectable', async () => {
    const result = await completed('user@null-mx.test');
    expect(result).toMatchObject({
      is_valid: false,
      mx_record_count: 1,
      connectable_mx_record_count: 0,
      can_connect: false,
      deliverability: 'undeliverable',
    });
    expect(result.score).toBeLessThanOrEqual(10);
    expect(dns.count('null-mx.test', 'A')).toBe(0); // the A record is not a fallback
  });

  it('NXDOMAIN: invalid', async () => {
    const result = await completed('user@gone.test');
    expect(result).toMatchObject({ is_valid: false, mx_record_count: 0, can_connect: false });
    expect(result.score).toBeLessThanOrEqual(10);
    expect(dns.count('gone.test', 'MX')).toBe(1); // an answer, not retried
  });

  it('an unknown name is NXDOMAIN too', async () => {
    expect((await completed('user@never-heard-of.test')).is_valid).toBe(false);
  });

  it('no MX and no A/AAAA: invalid', async () => {
    const result = await completed('user@empty.test');
    expect(result).toMatchObject({ is_valid: false, mx_record_count: 0, can_connect: false });
    expect(dns.count('empty.test', 'A')).toBe(1);
    expect(dns.count('empty.test', 'AAAA')).toBe(1);
  });

  it('a syntactically invalid address completes as invalid with score 0, without DNS', async () => {
    const result = await completed('not an address');
    expect(result).toMatchObject({ is_valid: false, score: 0, deliverability: 'undeliverable', did_you_mean: null });
    expect(dns.queries()).toHaveLength(0);
  });
});

describe('transient DNS failures', () => {
  it('SERVFAIL every time: error after DNS_TRIES attempts', async () => {
    const outcome = await validateEmail('user@broken.test');
    expect(outcome).toEqual({
      status: 'error',
      reason: 'DNS lookup of MX broken.test failed: SERVFAIL after 3 attempts',
    });
    expect(dns.count('broken.test', 'MX')).toBe(3);
  });

  it('honours DNS_TRIES', async () => {
    configure({ DNS_TRIES: '1' });
    expect((await validateEmail('user@broken.test')).status).toBe('error');
    expect(dns.count('broken.test', 'MX')).toBe(1);
  });

  it('does not cache the failure', async () => {
    await validateEmail('user@broken.test');
    await validateEmail('user@broken.test');
    expect(dns.count('broken.test', 'MX')).toBe(6);
  });

  it('SERVFAIL then OK: the retry completes', async () => {
    dns.setZone('flaky.test', { servfail: 2, mx: [{ priority: 10, exchange: 'mx1.two-mx.test' }] });
    const result = await completed('user@flaky.test');
    expect(result).toMatchObject({ is_valid: true, mx_record_count: 1 });
    expect(dns.count('flaky.test', 'MX')).toBe(3);
  });

  it('a malformed answer for one domain fails no other lookup in flight: they are asked again', async () => {
    // Given lookups of 8 healthy domains in flight when a malformed answer for another arrives (c-ares then drops the
    // connection they share, failing them all with it)
    const healthy = ['bulk-a', 'bulk-b', 'bulk-c', 'bulk-d', 'two-mx', 'a-only', 'public-mx', 'flaky'].map((d) => `jane@${d}.test`);
    const outcomes = await Promise.all(['x@garbage.test', ...healthy, 'y@garbage.test'].map((a) => validateEmail(a)));
    // Then every healthy one completes valid, as asked alone, and only the malformed domain's end in error
    const [garbage, ...rest] = outcomes;
    expect(rest.slice(0, -1).map((o) => o.status === 'completed' && o.result.is_valid)).toEqual(healthy.map(() => true));
    expect(garbage).toMatchObject({ status: 'error', reason: expect.stringContaining('malformed answer') });
    expect(outcomes.at(-1)).toMatchObject({ status: 'error' });
  });

  it('REFUSED is retried, then an error', async () => {
    const outcome = await validateEmail('user@refusing.test');
    expect(outcome).toMatchObject({ status: 'error' });
    expect(dns.count('refusing.test', 'MX')).toBe(3);
  });

  it('an answer slower than DNS_TIMEOUT_MS: error after the tries, in about tries × timeout', async () => {
    configure({ DNS_TIMEOUT_MS: '150', DNS_TRIES: '2' });
    const started = Date.now();
    const outcome = await validateEmail('user@slow.test');
    const elapsed = Date.now() - started;
    expect(outcome).toEqual({ status: 'error', reason: 'DNS lookup of MX slow.test failed: timed out after 2 attempts' });
    expect(dns.count('slow.test', 'MX')).toBe(2);
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(1000);
  });

  it('implicit MX whose A and AAAA lookups keep failing: error', async () => {
    const outcome = await validateEmail('user@implicit-broken.test');
    expect(outcome).toEqual({
      status: 'error',
      reason: 'DNS lookup of A implicit-broken.test failed: SERVFAIL after 3 attempts',
    });
    expect(dns.count('implicit-broken.test', 'MX')).toBe(1); // NODATA: an answer
    expect(dns.count('implicit-broken.test', 'A')).toBe(3);
    expect(dns.count('implicit-broken.test', 'AAAA')).toBe(3);
  });

  it('an unreachable DNS server: error, not a hang', async () => {
    configure({ DNS_SERVERS: '127.0.0.1:9', DNS_TIMEOUT_MS: '200', DNS_TRIES: '2' });
    const started = Date.now();
    const outcome = await validateEmail('user@two-mx.test');
    expect(outcome.status).toBe('error');
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('deadline', () => {
  it('answers error at the deadline; the lookup carries on into the cache', async () => {
    configure({ DNS_TIMEOUT_MS: '2000' });
    const started = Date.now();
    const outcome = await validateEmail('user@slow.test', { deadline: Date.now() + 150 });
    const elapsed = Date.now() - started;
    expect(outcome).toEqual({ status: 'error', reason: 'validation of slow.test did not finish before the deadline', unfinished: true });
    expect(elapsed).toBeGreaterThanOrEqual(140);
    expect(elapsed).toBeLessThan(500);

    // The next caller joins the lookup still in flight (no second query).
    const result = await completed('other@slow.test');
    expect(result.is_valid).toBe(true);
    expect(dns.count('slow.test', 'MX')).toBe(1);
  });

  it('a deadline already passed still gets a cached answer', async () => {
    await completed('user@two-mx.test');
    const result = await completed('again@two-mx.test', { deadline: Date.now() - 1 });
    expect(result.is_valid).toBe(true);
  });

  it('a generous deadline changes nothing', async () => {
    const result = await completed('user@two-mx.test', { deadline: Date.now() + 10_000 });
    expect(result.mx_record_count).toBe(2);
  });
});

describe('caching', () => {
  it('200 addresses on 4 domains make 4 MX lookups, not 200', async () => {
    const domains = ['bulk-a.test', 'bulk-b.test', 'bulk-c.test', 'bulk-d.test'];
    const addresses = Array.from({ length: 200 }, (_, i) => `user${i}@${domains[i % 4]}`);
    const outcomes = await Promise.all(addresses.map((address) => validateEmail(address)));
    expect(outcomes.every((o) => o.status === 'completed' && o.result.is_valid && o.result.can_connect)).toBe(true);

    const mx = dns.queries().filter((q) => q.type === 'MX');
    expect(mx).toHaveLength(4);
    // Plus one A and one AAAA per MX host: 12 queries in all.
    expect(dns.queries()).toHaveLength(12);

    // A second round is served from the cache entirely.
    await Promise.all(addresses.map((address) => validateEmail(address)));
    expect(dns.queries()).toHaveLength(12);
  });

  it('hosts shared by several domains are looked up once', async () => {
    await completed('a@two-mx.test');
    await completed('b@flaky.test'); // flaky.test's MX is mx1.two-mx.test (after its failures)
    expect(dns.count('mx1.two-mx.test', 'A')).toBe(1);
  });

  it('expires with VALIDATION_CACHE_TTL_SECONDS=0 (only in-flight lookups are shared)', async () => {
    configure({ VALIDATION_CACHE_TTL_SECONDS: '0' });
    await Promise.all([completed('a@two-mx.test'), completed('b@two-mx.test')]);
    expect(dns.count('two-mx.test', 'MX')).toBe(1);
    await completed('c@two-mx.test');
    expect(dns.count('two-mx.test', 'MX')).toBe(2);
  });
});

describe('SSRF guard', () => {
  it.each(['ssrf-loopback.test', 'ssrf-mapped.test'])(
    '%s: an MX host on a private address is not connectable unless ALLOW_PRIVATE_MX=true',
    async (domain) => {
      configure({ ALLOW_PRIVATE_MX: 'false' });
      const blocked = await completed(`user@${domain}`);
      expect(blocked).toMatchObject({ is_valid: true, mx_record_count: 1, connectable_mx_record_count: 0, can_connect: false });

      configure({ ALLOW_PRIVATE_MX: 'true' });
      const allowed = await completed(`user@${domain}`);
      expect(allowed).toMatchObject({ is_valid: true, mx_record_count: 1, connectable_mx_record_count: 1, can_connect: true });
    },
  );

  it('an implicit-MX domain on loopback is not connectable without ALLOW_PRIVATE_MX', async () => {
    configure({ ALLOW_PRIVATE_MX: 'false' });
    expect(await completed('user@a-only.test')).toMatchObject({ is_valid: true, can_connect: false });
  });

  it.each(['ssrf-metadata.test', 'ssrf-metadata-v6.test', 'link-local.test'])(
    '%s: link-local and metadata addresses are never connectable, even with ALLOW_PRIVATE_MX=true',
    async (domain) => {
      configure({ ALLOW_PRIVATE_MX: 'true' });
      expect(await completed(`user@${domain}`)).toMatchObject({ is_valid: true, connectable_mx_record_count: 0, can_connect: false });
    },
  );

  it('0.0.0.0 is never connectable, even with ALLOW_PRIVATE_MX=true', async () => {
    expect(await completed('user@unspecified.test')).toMatchObject({ is_valid: true, can_connect: false });
  });
});
