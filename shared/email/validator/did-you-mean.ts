import { placeDomain } from './public-suffix.ts';

/**
 * `did_you_mean`: a likely correction of a mistyped domain, in the manner of
 * Mailcheck (the typo library most sign-up forms use): compare the domain
 * with a short list of the domains people actually type, and the top-level
 * domain with the usual slips of `.com`. A small matcher rather than a
 * dependency: Mailcheck itself is unmaintained and browser-shaped, and the
 * whole logic is the distance below plus two tables.
 *
 * Never suggests anything for a popular domain itself, nor for the real
 * mailbox providers within an edit or two of one (REAL_NEIGHBOURS: ymail.com
 * is not a typo of gmail.com). The provider and disposable lists cannot be
 * that guard: both carry typo domains on purpose (gmial.com is a
 * "disposable" trap in mailchecker, gmail.co a "provider" in email-providers). The edit allowance grows with the length of
 * the popular name, so short real domains (ge.com, aon.com) are left alone.
 * `prepareProfile` first (the Public Suffix List checks a corrected TLD).
 */

/** The domains most addresses are at; a typo of one of these is worth a suggestion. */
export const POPULAR_DOMAINS = [
  'gmail.com',
  'googlemail.com',
  'yahoo.com',
  'yahoo.co.uk',
  'yahoo.fr',
  'ymail.com',
  'hotmail.com',
  'hotmail.co.uk',
  'hotmail.fr',
  'outlook.com',
  'live.com',
  'msn.com',
  'aol.com',
  'icloud.com',
  'me.com',
  'mac.com',
  'protonmail.com',
  'proton.me',
  'gmx.com',
  'gmx.de',
  'gmx.net',
  'web.de',
  'mail.ru',
  'yandex.ru',
  'comcast.net',
  'verizon.net',
  'att.net',
  'sbcglobal.net',
  'orange.fr',
  'free.fr',
  'libero.it',
  'qq.com',
  '163.com',
  'naver.com',
] as const;

/**
 * Real providers within reach of a popular domain: every domain of the free
 * provider list that the matcher below would correct, reviewed by hand and
 * kept when it is a service of its own rather than a typo trap.
 */
const REAL_NEIGHBOURS = new Set([
  'email.com',
  'mail.com',
  'hotmail.gr',
  'yahoo.gr',
  'protonmail.ch',
  'y7mail.com',
  'prontomail.com',
  'liberto.it',
  'aver.com',
]);

/** Top-level domains typed for `.com` (and a few for `.net`, `.org`): none of them exists. */
const TLD_TYPOS: Record<string, string> = {
  con: 'com',
  cpm: 'com',
  cmo: 'com',
  ocm: 'com',
  comm: 'com',
  coom: 'com',
  vom: 'com',
  xom: 'com',
  cim: 'com',
  clm: 'com',
  copm: 'com',
  'com.com': 'com',
  ney: 'net',
  nte: 'net',
  nett: 'net',
  ogr: 'org',
  rog: 'org',
  orgg: 'org',
};

/** Optimal string alignment distance: Levenshtein plus adjacent transpositions (`gmial` → `gmail` is one). */
export function editDistance(a: string, b: string, limit = 3): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/** The corrected domain, or undefined. `asciiDomain` is lower-case A-label form. */
export function suggestDomain(asciiDomain: string): string | undefined {
  if ((POPULAR_DOMAINS as readonly string[]).includes(asciiDomain) || REAL_NEIGHBOURS.has(asciiDomain)) return undefined;

  // A popular domain within reach, by the length of its name: none for names of
  // four letters or fewer (aol.com and aon.com are both real), one edit from
  // five (gmial.com), two from eight (googlemial.con).
  let best: { domain: string; distance: number } | undefined;
  for (const popular of POPULAR_DOMAINS) {
    const name = popular.slice(0, popular.indexOf('.')).length;
    const limit = name >= 8 ? 2 : name >= 5 ? 1 : 0;
    if (limit === 0) continue;
    const distance = editDistance(asciiDomain, popular, limit);
    if (distance <= limit && (!best || distance < best.distance)) best = { domain: popular, distance };
  }
  if (best) return best.domain;

  // A top-level domain that does not exist but is one of the usual slips.
  for (const [typo, tld] of Object.entries(TLD_TYPOS)) {
    if (asciiDomain.endsWith(`.${typo}`) && asciiDomain.length > typo.length + 1) {
      const fixed = `${asciiDomain.slice(0, -typo.length)}${tld}`;
      // gmail.con → gmail.com also goes through the popular list first; this is the rest (example.con).
      if (placeDomain(fixed).registrableDomain !== undefined) return fixed;
    }
  }
  return undefined;
}

/** `did_you_mean` for an address: the local part kept as typed, the domain corrected; null when nothing better is likely. */
export function didYouMean(local: string, asciiDomain: string): string | null {
  const domain = suggestDomain(asciiDomain);
  return domain ? `${local}@${domain}` : null;
}
