import type * as Tldts from 'tldts';
import { loadedOnFirstUse } from '#shared/util/first-use';

/**
 * Where a domain sits in the Public Suffix List (the copy shipped in `tldts`).
 * Only the ICANN section is used: private suffixes (github.io, blogspot.com)
 * describe web hosting, not who runs a mail domain.
 *
 * tldts builds its suffix trie when it is imported, so it is imported on the
 * first validation (`loadPublicSuffixList`), not with the bundle.
 */
export interface DomainPlacement {
  /** e.g. `co.uk` for `mail.example.co.uk`; the last label when the TLD is unknown. */
  publicSuffix: string;
  /** e.g. `example.co.uk`; undefined when the domain is itself a public suffix (`gov.uk`). */
  registrableDomain: string | undefined;
  /** True for `mail.example.co.uk`, false for `example.co.uk` and `example.com`. */
  isSubdomain: boolean;
}

const tldts = loadedOnFirstUse<typeof Tldts>(
  () => import('tldts'),
  'tldts is not loaded: await loadPublicSuffixList() (or prepareProfile) first',
);

/** Loads tldts, once per process. */
export const loadPublicSuffixList = tldts.load;

/** `asciiDomain` is the lower-case A-label form from checkSyntax. */
export function placeDomain(asciiDomain: string): DomainPlacement {
  const parsed = tldts.get().parse(asciiDomain, { allowPrivateDomains: false, extractHostname: false });
  const labels = asciiDomain.split('.');
  const publicSuffix = parsed.publicSuffix ?? labels[labels.length - 1] ?? asciiDomain;
  const registrableDomain = parsed.domain ?? undefined;
  return {
    publicSuffix,
    registrableDomain,
    isSubdomain: registrableDomain !== undefined && asciiDomain !== registrableDomain,
  };
}

export type InstitutionKind = 'gov' | 'edu' | 'mil';

/**
 * Government, education or military, read from the public suffix: the suffix
 * is the bare label (`agency.gov`, `mit.edu`, `army.mil`) or holds it
 * (`dept.gov.uk`, `unsw.edu.au`, `eb.mil.br`, and a state's own suffix under
 * it: `det.nsw.edu.au`, `education.vic.gov.au`, `fazenda.sp.gov.br`). Other
 * academic suffixes such as `ac.uk` do not count: only the gov/edu/mil labels
 * do. A domain whose last label is gov/edu/mil counts even if the list had no
 * entry for it.
 */
export function institutionKind(asciiDomain: string): InstitutionKind | undefined {
  const { publicSuffix } = placeDomain(asciiDomain);
  const labels = asciiDomain.split('.');
  const candidates = [...publicSuffix.split('.'), labels[labels.length - 1]];
  for (const kind of ['gov', 'edu', 'mil'] as const) {
    if (candidates.includes(kind)) return kind;
  }
  return undefined;
}
