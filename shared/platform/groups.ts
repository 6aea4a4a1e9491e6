import { liveContacts } from '#shared/data/contacts';
import * as groups from '#shared/data/groups';
import type { Group } from '#shared/data/groups';
import { addMember, isMember, MAX_GROUP_MEMBERS, memberPage, putFirstMembers, removeMember } from '#shared/data/group-members';
import type { Hold } from '#shared/data/idempotency';
import type { Tenant } from '#shared/data/tokens';
import { conflict, notFound } from '#shared/errors';
import { cursorPage, type CursorQuery } from '#shared/messaging/cursor';
import { presentContact, requireContact } from '#shared/platform/contacts';
import { jobPut, newJob, startJob } from '#shared/jobs/run';
import { purgeGroup } from '#shared/purge/group';
import { derivedId } from '#shared/util/ids';

export const presentGroup = (g: Group) => ({ id: g.id, name: g.name, member_count: g.member_count, created_at: g.created_at });

/**
 * A group with its first members (up to MAX_GROUP_MEMBERS contacts of the
 * account, else 404 naming `members`): the members are written first, the
 * group item last, so no one ever sees a group with part of its members.
 */
export async function createGroup(who: Tenant, input: { name: string; members?: string[] }, idempotency?: Hold): Promise<Group> {
  const members = [...new Set(input.members ?? [])];
  const found = await liveContacts(who.accountId, members);
  const missing = members.find((id) => !found.has(id));
  if (missing !== undefined) throw notFound('contact', missing, 'members');
  const id = idempotency ? derivedId('grp', idempotency.createdMs, idempotency.generation) : undefined;
  const groupId = id ?? groups.newGroupId();
  await putFirstMembers(who.accountId, groupId, members);
  return groups.createGroup({ accountId: who.accountId, name: input.name, id: groupId, memberCount: members.length });
}

export async function requireGroup(who: Tenant, id: string, consistent = false): Promise<Group> {
  const group = await groups.getGroup(who.accountId, id, consistent);
  if (!group) throw notFound('group', id, 'id');
  return group;
}

export async function listGroups(who: Tenant, query: CursorQuery) {
  const page = await cursorPage(query, async (id) => (await groups.getGroup(who.accountId, id)) !== undefined);
  return groups.listGroups(who.accountId, page);
}

export async function renameGroup(who: Tenant, id: string, name: string | undefined): Promise<Group> {
  if (name === undefined) return requireGroup(who, id);
  const group = await groups.renameGroup(who.accountId, id, name);
  if (!group) throw notFound('group', id, 'id');
  return group;
}

/** Gone at once, so no message reaches it any more; its member items are purged now and, if many, from the queue. */
export async function deleteGroup(who: Tenant, id: string, deadline: number): Promise<void> {
  const job = newJob(purgeGroup, who.accountId, { groupId: id });
  if (!(await groups.deleteGroup(who.accountId, id, [jobPut(job)]))) throw notFound('group', id, 'id');
  await startJob(purgeGroup, job, deadline);
}

/** Adds a live contact of the account; adding a member twice changes nothing. */
export async function addGroupMember(who: Tenant, groupId: string, contactId: string): Promise<Group> {
  // The add's transaction proves the group exists: no read of it before.
  await requireContact(who, contactId, 'contact_id');
  const outcome = await addMember(who.accountId, groupId, contactId);
  if (outcome === 'no_group') throw notFound('group', groupId, 'id');
  if (outcome === 'full') throw conflict(`The group has ${MAX_GROUP_MEMBERS} members already`, 'group_full');
  return requireGroup(who, groupId, true);
}

export async function removeGroupMember(who: Tenant, groupId: string, contactId: string): Promise<Group> {
  if (!(await removeMember(who.accountId, groupId, contactId))) {
    await requireGroup(who, groupId, true);
    throw notFound('member', contactId, 'contact_id');
  }
  return requireGroup(who, groupId, true);
}

/** The members as contacts, newest contact first. */
export async function listGroupMembers(who: Tenant, groupId: string, query: CursorQuery) {
  await requireGroup(who, groupId);
  const page = await cursorPage(query, (id) => isMember(who.accountId, groupId, id));
  const ids = await memberPage(who.accountId, groupId, page);
  const found = await liveContacts(who.accountId, ids.items);
  return { items: ids.items.flatMap((id) => (found.has(id) ? [presentContact(found.get(id)!)] : [])), hasMore: ids.hasMore };
}
