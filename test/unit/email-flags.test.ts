import { beforeAll, describe, expect, it } from 'vitest';
import {
  ROLE_CATEGORIES,
  canonicalEmail,
  checkSyntax,
  institutionKind,
  isDisposableDomain,
  isFreeProvider,
  loadValidator,
  placeDomain,
  profileAddress,
  roleCategory,
  splitAlias,
} from '#shared/email/validator/index';

// The checks are synchronous once their data is loaded (validateEmail loads it itself).
beforeAll(() => loadValidator());

/** Parts of a valid address, as validateEmail sees them. */
function parts(address: string) {
  const check = checkSyntax(address);
  if (!check.ok) throw new Error(`${address}: ${check.reason}`);
  return check;
}
const profile = (address: string) => {
  const { local, asciiDomain } = parts(address);
  return profileAddress(local, asciiDomain);
};

describe('canonical_email', () => {
  it.each([
    ['user@example.com', 'user@example.com'],
    ['User+news@Example.COM', 'User@example.com'],
    ['First.Last+a+b@example.com', 'First.Last@example.com'],
    // Only the +tag and the domain's case: Gmail's own rules (dots, case) are not applied
    ['J.O.Hn+x@Gmail.com', 'J.O.Hn@gmail.com'],
    ['J.O.Hn@googlemail.com', 'J.O.Hn@googlemail.com'],
    ['John.Smith@yahoo.com', 'John.Smith@yahoo.com'],
    ['ユーザー+tag@例え.jp', 'ユーザー@例え.jp'],
    ['a@xn--r8jz45g.jp', 'a@例え.jp'],
    ['a@ＥＸＡＭＰＬＥ.com', 'a@example.com'],
    ['+tag@example.com', '+tag@example.com'],
    ['user+@example.com', 'user+@example.com'],
  ])('%s → %s', (address, canonical) => {
    const { local, asciiDomain } = parts(address);
    expect(canonicalEmail(local, asciiDomain)).toBe(canonical);
    expect(profile(address).canonical_email).toBe(canonical);
  });
});

describe('is_alias', () => {
  it.each([
    ['user+tag@example.com', true],
    ['user+a+b@example.com', true],
    ['user@example.com', false],
    ['+tag@example.com', false],
    ['user+@example.com', false],
    ['u.ser@gmail.com', false],
  ])('%s → %s', (address, alias) => {
    expect(profile(address).is_alias).toBe(alias);
  });

  it('splits at the first plus', () => {
    expect(splitAlias('a+b+c')).toEqual({ base: 'a', tag: 'b+c' });
  });
});

describe('is_username_generic', () => {
  it.each([
    ['admin@example.com', 'admin'],
    ['Postmaster@example.com', 'admin'],
    ['info+list@example.com', 'contact'],
    ['no-reply@example.com', 'noreply'],
    ['No.Reply@example.com', 'noreply'],
    ['do_not_reply@example.com', 'noreply'],
    ['support@example.com', 'support'],
    ['SALES@example.com', 'sales'],
    ['billing@example.com', 'finance'],
    ['jobs@example.com', 'jobs'],
    ['abuse@example.com', 'security'],
    ['marketing@example.com', 'marketing'],
  ])('%s is a role (%s)', (address, category) => {
    expect(roleCategory(parts(address).local)).toBe(category);
    expect(profile(address).is_username_generic).toBe(true);
  });

  it.each(['john@example.com', 'admin.john@example.com', 'information.desk.jane@example.com', 'x+admin@example.com'])(
    '%s is personal',
    (address) => {
      expect(profile(address).is_username_generic).toBe(false);
    },
  );

  it('keeps a curated list of reasonable size without duplicates', () => {
    const names = Object.values(ROLE_CATEGORIES).flat();
    expect(names.length).toBeGreaterThanOrEqual(80);
    expect(names.length).toBeLessThanOrEqual(160);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toBe(name.toLowerCase());
  });
});

describe('is_free', () => {
  it.each([
    'gmail.com',
    'googlemail.com',
    'yahoo.com',
    'yahoo.co.uk',
    'outlook.com',
    'hotmail.com',
    'gmx.de',
    'web.de',
    'yandex.ru',
    'mail.ru',
    'proton.me',
    'icloud.com',
    'aol.com',
    'qq.com',
    'tutanota.com',
  ])('%s is a free provider', (domain) => {
    expect(isFreeProvider(domain)).toBe(true);
  });

  it.each([
    'example.com', // reserved for documentation, though the package lists it
    'mailinator.com', // disposable: listed by the package, subtracted
    'guerrillamail.com',
    '10minutemail.com',
    'acme-corp.com',
    'mit.edu',
    'nus.edu.sg', // a university, though the package lists it
    'agency.gov',
  ])('%s is not a free provider', (domain) => {
    expect(isFreeProvider(domain)).toBe(false);
  });

  it('counts a subdomain of a provider through its registrable domain', () => {
    expect(isFreeProvider('mail.yahoo.co.uk')).toBe(true);
    expect(profile('a@GMAIL.com').is_free).toBe(true);
  });
});

describe('disposable domains (score only)', () => {
  it.each([
    ['mailinator.com', true],
    ['yopmail.com', true],
    ['sub.mailinator.com', true],
    ['gmail.com', false],
    ['example.co.uk', false],
    // The list names the real suffix zp.ua; a domain below it is not condemned.
    ['firm.zp.ua', false],
    ['nus.edu.sg', false],
  ])('%s → %s', (domain, disposable) => {
    expect(isDisposableDomain(domain)).toBe(disposable);
  });
});

describe('is_gov / is_edu / is_mil', () => {
  it.each([
    ['agency.gov', 'gov'],
    ['sub.agency.gov', 'gov'],
    ['dept.gov.uk', 'gov'],
    ['health.gov.au', 'gov'],
    ['mit.edu', 'edu'],
    ['cs.mit.edu', 'edu'],
    ['unsw.edu.au', 'edu'],
    ['army.mil', 'mil'],
    ['eb.mil.br', 'mil'],
    // A state's suffix under the country's gov/edu (the Public Suffix List has nsw.edu.au, vic.gov.au, sp.gov.br, uw.gov.pl)
    ['det.nsw.edu.au', 'edu'],
    ['education.vic.gov.au', 'gov'],
    ['health.nsw.gov.au', 'gov'],
    ['fazenda.sp.gov.br', 'gov'],
    ['x.uw.gov.pl', 'gov'],
    ['example.com', undefined],
    ['ox.ac.uk', undefined], // academic, but not an edu label
    ['gov.example.com', undefined],
    ['edu-portal.com', undefined],
    ['example.gouv.fr', undefined],
  ])('%s → %s', (domain, kind) => {
    expect(institutionKind(domain)).toBe(kind);
    const flags = profile(`a@${domain}`);
    expect([flags.is_gov, flags.is_edu, flags.is_mil]).toEqual([kind === 'gov', kind === 'edu', kind === 'mil']);
  });
});

describe('is_subdomain', () => {
  it.each([
    ['mail.example.co.uk', true],
    ['example.co.uk', false],
    ['example.com', false],
    ['mail.example.com', true],
    ['a.b.example.com', true],
    ['cs.mit.edu', true],
    ['dept.gov.uk', false],
    ['mail.例え.jp', true],
    ['foo.example', false], // unknown TLD: the last label is the suffix
    ['mail.foo.example', true],
    ['user.github.io', true], // only the ICANN section counts: github.io is the registrable domain
  ])('%s → %s', (domain, subdomain) => {
    expect(profile(`a@${domain}`).is_subdomain).toBe(subdomain);
  });

  it('reports the registrable domain and public suffix', () => {
    expect(placeDomain('mail.example.co.uk')).toEqual({
      publicSuffix: 'co.uk',
      registrableDomain: 'example.co.uk',
      isSubdomain: true,
    });
  });
});
