import { loadedOnFirstUse } from '#shared/util/first-use';
import { institutionKind, loadPublicSuffixList, placeDomain } from './public-suffix.ts';

/**
 * Free mailbox providers (gmail.com, yahoo.com, gmx.de, proton.me, ...) and
 * disposable (throwaway) domains, from data published in two npm packages and
 * copied into domain-lists.generated.ts by `npm run lists`, so nothing is
 * downloaded at install or run time:
 *
 * - `email-providers` (all.json, ~8,700 domains, republished monthly): the
 *   free-provider list. It mixes in some throwaway services
 *   (mailinator.com, 10minutemail.com, ...), which are not mailbox providers,
 *   so every domain the disposable list knows is subtracted.
 * - `mailchecker` (~56,000 disposable domains, maintained): the disposable
 *   list. It is not part of the API result; it feeds the score and keeps
 *   throwaway services out of `is_free`.
 *
 * The lists are newline-joined strings (cheap to load, see the generator),
 * in a module of their own that is imported on the first validation
 * (`loadMailboxProviders`); each becomes a Set once per process.
 */

/** In the package list but reserved for documentation (RFC 2606), never a mailbox provider. */
const NOT_PROVIDERS = new Set(['example.com', 'example.net', 'example.org']);

/** Well-known free providers the package list lacks (checked against it when this file was written). */
const EXTRA_PROVIDERS = ['tuta.com', 'tuta.io', 'tutanota.com', 'tutanota.de', 'tutamail.com', 'zohomail.com'];

const lists = loadedOnFirstUse<{ disposable: ReadonlySet<string>; free: ReadonlySet<string> }>(
  () =>
    Promise.all([import('./domain-lists.generated.ts'), loadPublicSuffixList()]).then(([generated]) => {
      const disposable = new Set(generated.DISPOSABLE_DOMAINS.split('\n'));
      const free = new Set(
        [...generated.PROVIDER_DOMAINS.split('\n'), ...EXTRA_PROVIDERS]
          // Exact matches only: cheap enough for a cold start, and the list's
          // throwaway services are named by their own domains.
          .filter((domain) => !NOT_PROVIDERS.has(domain) && !disposable.has(domain)),
      );
      return { disposable, free };
    }),
  'the domain lists are not loaded: await loadMailboxProviders() (or prepareProfile) first',
);

/** Loads the domain lists (and the Public Suffix List the checks use), once per process. */
export const loadMailboxProviders = lists.load;
const loaded = lists.get;

/**
 * Whether the domain, or its registrable domain (`mail.yahoo.co.uk` →
 * `yahoo.co.uk`), is a free mailbox provider. A gov/edu/mil domain never is,
 * even when a list carries one (universities that once offered alumni mail).
 */
export function isFreeProvider(asciiDomain: string): boolean {
  if (institutionKind(asciiDomain)) return false;
  const providers = loaded().free;
  if (providers.has(asciiDomain)) return true;
  const registrable = placeDomain(asciiDomain).registrableDomain;
  return registrable !== undefined && providers.has(registrable);
}

/**
 * Whether the domain or a parent of it, up to its registrable domain, is a
 * throwaway-mail domain (the list also names shared parents such as `usa.cc`).
 * The walk stops at the public suffix: the list carries a few real suffixes
 * (`zp.ua`, `nom.za`) that must not condemn every domain registered below them.
 * gov/edu/mil domains are exempt: the list is crowd-sourced and institutions
 * are not throwaway services.
 */
export function isDisposableDomain(asciiDomain: string): boolean {
  if (institutionKind(asciiDomain)) return false;
  const registrable = placeDomain(asciiDomain).registrableDomain ?? asciiDomain;
  const domains = loaded().disposable;
  let candidate = asciiDomain;
  for (;;) {
    if (domains.has(candidate)) return true;
    if (candidate === registrable || !candidate.endsWith(`.${registrable}`)) return false;
    candidate = candidate.slice(candidate.indexOf('.') + 1);
  }
}
