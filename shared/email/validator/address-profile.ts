import { domainToDisplay, loadIdna, needsIdna } from './idna.ts';
import { isDisposableDomain, isFreeProvider, loadMailboxProviders } from './mailbox-providers.ts';
import { institutionKind, loadPublicSuffixList, placeDomain } from './public-suffix.ts';
import { isRoleAccount } from './roles.ts';

/**
 * Everything about an address that needs no network: the flags of the API
 * result that come from the text alone. Pure functions, so they are tested
 * with tables rather than a DNS server.
 */
export interface AddressProfile {
  canonical_email: string;
  is_alias: boolean;
  is_username_generic: boolean;
  is_free: boolean;
  is_gov: boolean;
  is_edu: boolean;
  is_mil: boolean;
  is_subdomain: boolean;
  /** Not an API field: feeds the score. */
  is_disposable: boolean;
}

/**
 * `user+tag` → base `user`, tag `tag` (sub-addressing, RFC 5233). Only a
 * non-empty tag after a non-empty base counts: `+tag@` and `user+@` are plain
 * local parts that happen to hold a plus.
 */
export function splitAlias(local: string): { base: string; tag: string | undefined } {
  const plus = local.indexOf('+');
  if (plus <= 0 || plus === local.length - 1) return { base: local, tag: undefined };
  return { base: local.slice(0, plus), tag: local.slice(plus + 1) };
}

/**
 * The address with its `+tag` removed and the domain lower-cased. The domain
 * keeps its Unicode form (`例え.jp`, not `xn--r8jz45g.jp`) because the field is
 * for display and de-duplication by people; `asciiDomain` is the machine form.
 * The local part is otherwise kept as sent, as the contract defines the field
 * (lower-cased domain, `+tag` removed): RFC 5321 lets a server treat its case
 * as significant, and a provider's own rules (Gmail ignores dots) are not
 * the address's.
 */
export function canonicalEmail(local: string, asciiDomain: string): string {
  return `${splitAlias(local).base}@${domainToDisplay(asciiDomain)}`;
}

/**
 * Loads what profileAddress needs: the Public Suffix List and the domain
 * lists always, tr46 only to show an A-label domain in Unicode.
 */
export async function prepareProfile(asciiDomains: readonly string[]): Promise<void> {
  await Promise.all([loadPublicSuffixList(), loadMailboxProviders(), ...(asciiDomains.some(needsIdna) ? [loadIdna()] : [])]);
}

/** `local` and `asciiDomain` as returned by a successful checkSyntax; `prepareProfile` first. */
export function profileAddress(local: string, asciiDomain: string): AddressProfile {
  const kind = institutionKind(asciiDomain);
  return {
    canonical_email: canonicalEmail(local, asciiDomain),
    is_alias: splitAlias(local).tag !== undefined,
    is_username_generic: isRoleAccount(local),
    is_free: isFreeProvider(asciiDomain),
    is_gov: kind === 'gov',
    is_edu: kind === 'edu',
    is_mil: kind === 'mil',
    is_subdomain: placeDomain(asciiDomain).isSubdomain,
    is_disposable: isDisposableDomain(asciiDomain),
  };
}
