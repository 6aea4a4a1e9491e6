import { getContacts, type Contact } from '#shared/data/contacts';

/**
 * Senders embedded in message pages, remembered per container for a minute:
 * a page then costs the token and one Query, not a batch read of its senders
 * as well. A contact changed meanwhile (a new avatar, `last_active_at`) shows
 * in read pages within CONTACT_CACHE_SECONDS; the write paths (send, update)
 * present the sender as just read. Bounded, so a busy container cannot grow
 * without end.
 */
export const CONTACT_CACHE_SECONDS = 60;
const MAX_ENTRIES = 10_000;

const entries = new Map<string, { contact: Contact | undefined; expiresAt: number }>();

export async function cachedContacts(accountId: string, contactIds: string[]): Promise<Map<string, Contact>> {
  const now = Date.now();
  const found = new Map<string, Contact>();
  const missing: string[] = [];
  for (const id of contactIds) {
    const entry = entries.get(`${accountId}#${id}`);
    if (entry && entry.expiresAt > now) {
      if (entry.contact) found.set(id, entry.contact);
    } else missing.push(id);
  }
  if (missing.length === 0) return found;
  const fresh = await getContacts(accountId, missing);
  for (const id of missing) {
    const key = `${accountId}#${id}`;
    entries.delete(key); // re-inserted last: the Map's order is the eviction order
    entries.set(key, { contact: fresh.get(id), expiresAt: now + CONTACT_CACHE_SECONDS * 1000 });
    if (entries.size > MAX_ENTRIES) entries.delete(entries.keys().next().value!);
    const contact = fresh.get(id);
    if (contact) found.set(id, contact);
  }
  return found;
}

export const clearContactCache = () => entries.clear();
