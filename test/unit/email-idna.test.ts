import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  domainToAsciiByUts46,
  domainToDisplay,
  domainToDisplayByUts46,
  loadIdna,
  needsIdna,
  plainDomainToAscii,
} from '#shared/email/validator/idna';

/** Every string of up to `length` characters from `alphabet`. */
function allStrings(alphabet: string, length: number): string[] {
  let level = [''];
  const all = [''];
  for (let i = 0; i < length; i++) {
    level = level.flatMap((prefix) => [...alphabet].map((char) => prefix + char));
    all.push(...level);
  }
  return all;
}

/** What a mail domain can look like in ASCII, the odd and the broken included. */
const table = [
  'example.com',
  'EXAMPLE.COM',
  'Mail.Example.Co.UK',
  'my-domain.com',
  'a-b-c.d-e',
  '1example.com',
  '123.example',
  '0x1f.com',
  'a.b',
  'x.y.z.w.v',
  `${'l'.repeat(63)}.com`,
  `${'l'.repeat(64)}.com`,
  `${'d'.repeat(63)}.${'e'.repeat(63)}.${'f'.repeat(57)}.com`,
  '-example.com',
  'example-.com',
  'example.-com',
  'example.com-',
  'ab--cd.com',
  'AB--CD.com',
  'a--b.com',
  'abc--d.com',
  'x-n--a.com',
  'xn-a.com',
  'xn.com',
  'xnxn--a.com',
  'axn--b.com',
  '--.com',
  '-.com',
  'a..b',
  '.example.com',
  'example.com.',
  '.',
  '',
  'localhost',
  '-',
];

const asciiDomains = [...table, ...allStrings('aZ0-.', 6)].filter((domain) => !needsIdna(domain));

describe('the ASCII path, without tr46', () => {
  beforeAll(() => loadIdna());

  it('covers the table (a domain with an A-label or a non-ASCII character goes to tr46)', () => {
    expect(asciiDomains.length).toBeGreaterThan(19_000);
    expect(table.filter(needsIdna)).toEqual([]);
    for (const domain of ['xn--bcher-kva.example', 'a.XN--p1ai', 'bücher.example', 'ＥＸＡＭＰＬＥ.com', 'a_b.com', 'a b.com']) {
      expect(needsIdna(domain)).toBe(true);
    }
  });

  it('answers what the UTS #46 path answers, for every domain of the table and every short one', () => {
    const differing = asciiDomains.filter(
      (domain) => JSON.stringify(plainDomainToAscii(domain)) !== JSON.stringify(domainToAsciiByUts46(domain)),
    );
    expect(differing).toEqual([]);
  });

  it('shows a domain without an A-label as it is, as tr46 would', () => {
    const lower = [...new Set(asciiDomains.map((domain) => domain.toLowerCase()))];
    expect(lower.filter((domain) => domainToDisplay(domain) !== domainToDisplayByUts46(domain))).toEqual([]);
  });
});

describe('loading', () => {
  afterEach(() => {
    vi.doUnmock('tr46');
    vi.resetModules();
  });

  it('checks all-ASCII addresses without importing tr46, and imports it for an internationalized domain', async () => {
    // Given a fresh validator, and a record of whether tr46 gets imported
    vi.resetModules();
    const imported = vi.fn();
    vi.doMock('tr46', () => {
      imported();
      return { toASCII: () => null, toUnicode: (domain: string) => ({ domain, error: false }) };
    });
    const { checkSyntax, prepareSyntax } = await import('#shared/email/validator/syntax');
    // Then ASCII domains are checked as always
    const ascii = ['User@Example.COM', 'a@my-domain.com', 'a@-bad.com', 'a@ab--cd.com', 42];
    await prepareSyntax(ascii);
    expect(ascii.map(checkSyntax)).toEqual([
      { ok: true, local: 'User', domain: 'Example.COM', asciiDomain: 'example.com' },
      { ok: true, local: 'a', domain: 'my-domain.com', asciiDomain: 'my-domain.com' },
      { ok: false, reason: "domain label '-bad' starts or ends with a hyphen" },
      // An LDH label with '--' in positions 3-4 is a host name RFC 5321 takes (only a U-label may not have it)
      { ok: true, local: 'a', domain: 'ab--cd.com', asciiDomain: 'ab--cd.com' },
      { ok: false, reason: 'must be a string' },
    ]);
    expect(imported).not.toHaveBeenCalled();
    // And an internationalized domain needs tr46: unprepared the check throws, prepared it is imported
    expect(() => checkSyntax('a@bücher.example')).toThrow(/tr46 is not loaded/);
    expect(() => checkSyntax('a@xn--bcher-kva.example')).toThrow(/tr46 is not loaded/);
    await prepareSyntax(['a@example.com', 'a@bücher.example']);
    expect(imported).toHaveBeenCalledOnce();
  });
});
