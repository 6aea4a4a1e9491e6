import * as contacts from '#shared/data/contacts';
import type { Contact, ContactChanges } from '#shared/data/contacts';
import type { Hold } from '#shared/data/idempotency';
import type { Tenant } from '#shared/data/tokens';
import { conflict, notFound } from '#shared/errors';
import { cursorPage, type CursorQuery } from '#shared/messaging/cursor';
import { jobPut, newJob, startJob } from '#shared/jobs/run';
import { purgeContact } from '#shared/purge/contact';
import { derivedId } from '#shared/util/ids';

export { presentContact } from '#shared/messaging/present';

export interface ContactInput {
  username: string;
  phone_number?: string | null;
  avatar_url?: string | null;
}

/** A new contact; a retried idempotent request writes (and finds) the same one. */
export function createContact(who: Tenant, input: ContactInput, idempotency?: Hold): Promise<Contact> {
  return contacts.createContact({
    accountId: who.accountId,
    username: input.username,
    phoneNumber: input.phone_number ?? undefined,
    avatarUrl: input.avatar_url ?? undefined,
    ...(idempotency ? { id: derivedId('ct', idempotency.createdMs, idempotency.generation) } : {}),
  });
}

/** A live contact of the caller's account, or 404 as for an id that never existed. */
export async function requireContact(who: Tenant, id: string, param = 'id', consistent = false): Promise<Contact> {
  const contact = await contacts.getContact(who.accountId, id, consistent);
  if (!contact) throw notFound('contact', id, param);
  return contact;
}

export async function listContacts(who: Tenant, query: CursorQuery) {
  const page = await cursorPage(query, async (id) => (await contacts.getContact(who.accountId, id)) !== undefined);
  return contacts.listContacts(who.accountId, page);
}

/** Tries of a change that another change of the same contact overtook (each reads the contact again). */
const UPDATE_TRIES = 3;

export async function updateContact(who: Tenant, id: string, changes: ContactChanges): Promise<Contact> {
  for (let attempt = 0; attempt < UPDATE_TRIES; attempt++) {
    const current = await requireContact(who, id, 'id', true);
    const updated = await contacts.updateContact(current, changes);
    if (updated) return updated;
  }
  throw conflict('The contact is being changed by other requests; retry', 'concurrent_update');
}

/**
 * Gone at once (its tokens refused, its username free, out of the list);
 * its tokens, group memberships and own conversations are removed now and,
 * if many, continued from the purge queue. Others keep what it sent.
 */
export async function deleteContact(who: Tenant, id: string, deadline: number): Promise<void> {
  const current = await requireContact(who, id, 'id', true);
  const job = newJob(purgeContact, who.accountId, { contactId: id });
  if (!(await contacts.tombstoneContact(current, [jobPut(job)]))) throw notFound('contact', id, 'id');
  await startJob(purgeContact, job, deadline);
}
