import { loadIdna } from './idna.ts';
import { loadMailboxProviders } from './mailbox-providers.ts';
import { loadPublicSuffixList } from './public-suffix.ts';

/**
 * Loads every heavy dependency of the synchronous checks at once, whatever
 * the addresses: for tests and tools. The request paths load only what their
 * addresses need (prepareSyntax, prepareProfile).
 */
export async function loadValidator(): Promise<void> {
  await Promise.all([loadIdna(), loadPublicSuffixList(), loadMailboxProviders()]);
}
