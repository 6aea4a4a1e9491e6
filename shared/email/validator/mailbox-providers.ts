import allProviders from 'email-providers/all.json' with { type: 'json' };
import * as mailcheckerModule from 'mailchecker';
import { institutionKind, placeDomain } from './public-suffix.ts';

/**
 * Free mailbox providers (gmail.com, yahoo.com, gmx.de, proton.me, ...) and
 * disposable (throwaway) domains, from data shipped inside two npm packages,
 * so nothing is downloaded at install or run time:
 *
 * - `email-providers` (all.json, ~8,700 domains, republished monthly): the
 *   free-provider list. It mixes in some throwaway services
 *   (mailinator.com, 10minutemail.com, ...), which are not mailbox providers,
 *   so every domain the disposable list knows is subtracted.
 * - `mailchecker` (~56,000 disposable domains, maintained): the disposable
 *   list. It is not part of the API result; it feeds the score and keeps
 *   throwaway services out of `is_free`.
 *
 * Both are loaded once per process; the free set is built on first use.
 */
type MailChecker = { blacklist(): Set<string> };
// mailchecker is CommonJS whose `blacklist` Node's ESM loader cannot see as a
// named export; the module object itself sits on `default` (Node, esbuild, vite).
const mailchecker: MailChecker =
  (mailcheckerModule as unknown as { default?: MailChecker }).default ?? (mailcheckerModule as unknown as MailChecker);
const DISPOSABLE: ReadonlySet<string> = mailchecker.blacklist();

/** In the package list but reserved for documentation (RFC 2606), never a mailbox provider. */
const NOT_PROVIDERS = new Set(['example.com', 'example.net', 'example.org']);

/** Well-known free providers the package list lacks (checked against it when this file was written). */
const EXTRA_PROVIDERS = ['tuta.com', 'tuta.io', 'tutanota.com', 'tutanota.de', 'tutamail.com', 'zohomail.com'];

let freeProviders: ReadonlySet<string> | undefined;

function freeProviderSet(): ReadonlySet<string> {
  freeProviders ??= new Set(
    [...(allProviders as string[]), ...EXTRA_PROVIDERS]
      .map((domain) => domain.toLowerCase())
      // Exact matches only: cheap enough for a cold start, and the list's
      // throwaway services are named by their own domains.
      .filter((domain) => !NOT_PROVIDERS.has(domain) && !DISPOSABLE.has(domain)),
  );
  return freeProviders;
}

/**
 * Whether the domain, or its registrable domain (`mail.yahoo.co.uk` →
 * `yahoo.co.uk`), is a free mailbox provider. A gov/edu/mil domain never is,
 * even when a list carries one (universities that once offered alumni mail).
 */
export function isFreeProvider(asciiDomain: string): boolean {
  if (institutionKind(asciiDomain)) return false;
  const providers = freeProviderSet();
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
  let candidate = asciiDomain;
  for (;;) {
    if (DISPOSABLE.has(candidate)) return true;
    if (candidate === registrable || !candidate.endsWith(`.${registrable}`)) return false;
    candidate = candidate.slice(candidate.indexOf('.') + 1);
  }
}
