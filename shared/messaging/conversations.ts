import * as contacts from '#shared/data/contacts';
import * as conversations from '#shared/data/conversations';
import * as groups from '#shared/data/groups';
import { isMessageOf } from '#shared/data/messages';
import type { Principal } from '#shared/data/tokens';
import { conflict, invalid, notFound } from '#shared/errors';
import { cursorPage, type CursorQuery } from '#shared/messaging/cursor';
import { jobPut, newJob, startJob } from '#shared/jobs/run';
import { purgeConversation } from '#shared/purge/conversation';
import { isMember } from '#shared/data/group-members';
import { readThrough } from '#shared/messaging/read-state';
import { newId, nowSeconds } from '#shared/util/ids';

export async function openConversation(who: Principal, input: { contact_id?: string; group_id?: string }) {
  if (input.contact_id === undefined && input.group_id === undefined) {
    throw invalid('Provide exactly one of contact_id or group_id', 'contact_id', 'parameter_missing');
  }
  if (input.contact_id !== undefined && input.group_id !== undefined) {
    throw invalid('Provide exactly one of contact_id or group_id', 'group_id');
  }
  if (input.contact_id !== undefined) {
    if (input.contact_id === who.contactId) throw invalid('A conversation is with another contact, not with yourself', 'contact_id');
    if (!(await contacts.getContact(who.accountId, input.contact_id))) throw notFound('contact', input.contact_id, 'contact_id');
    return conversations.putConversation(who, { contactId: input.contact_id });
  }
  const groupId = input.group_id!;
  // Only a member opens a group's conversation; to anyone else the group is as unknown as a missing one.
  const [group, member] = await Promise.all([groups.getGroup(who.accountId, groupId), isMember(who.accountId, groupId, who.contactId)]);
  if (!group || !member) throw notFound('group', groupId, 'group_id');
  return conversations.putConversation(who, { groupId });
}

export async function getConversation(who: Principal, id: string) {
  const conversation = await conversations.findConversation(who, id);
  if (!conversation) throw notFound('conversation', id, 'id');
  return conversation;
}

export async function listConversations(
  who: Principal,
  query: CursorQuery & { muted?: boolean; archived?: boolean; pinned?: boolean; group_id?: string },
) {
  const filters = { muted: query.muted, archived: query.archived, pinned: query.pinned, groupId: query.group_id };
  // A cursor names a conversation of the list being paged: one the filters leave out is not in it (400).
  const page = await cursorPage(query, async (id) => {
    const found = await conversations.findConversation(who, id);
    return found !== undefined && conversations.keeps(filters, found);
  });
  return conversations.queryConversations(who, filters, page);
}

export interface ConversationUpdate {
  pinned_message_id?: string | null;
  is_pinned?: boolean;
  is_muted?: boolean;
  archived_at?: number | null;
  opened?: boolean;
}

export async function updateConversation(who: Principal, id: string, update: ConversationUpdate) {
  const current = await getConversation(who, id);
  if (typeof update.pinned_message_id === 'string' && !(await isMessageOf(who, id, update.pinned_message_id))) {
    throw invalid('pinned_message_id must be a message of this conversation', 'pinned_message_id');
  }
  const { opened, ...changes } = update;
  // Opening reads the whole thread for this user, up to now.
  if (opened) {
    // A member removed from the group still reads what they received, but no sender hears of it.
    const tellSenders = current.group_id === null || (await isMember(who.accountId, current.group_id, who.contactId));
    await readThrough(who, current, newId('msg'), undefined, { tellSenders });
  }
  const updated = await conversations.writeConversation(who, current, {
    ...changes,
    ...(opened ? { last_opened_at: nowSeconds() } : {}),
  });
  if (!updated) throw notFound('conversation', id, 'id');
  if (updated === 'conflict') throw conflict('The conversation is being changed by other requests; retry', 'concurrent_update');
  const pinned = update.pinned_message_id;
  if (typeof pinned === 'string' && updated.pinned_message_id === pinned && !(await isMessageOf(who, id, pinned))) {
    // Deleted between the check and the write: its delete cleared pins before ours landed, so ours goes as the delete would have.
    await conversations.clearPinnedMessage(who, id, pinned);
    return (await conversations.findConversation(who, id)) ?? { ...updated, pinned_message_id: null };
  }
  return updated;
}

/** Gone for readers at once; its messages are purged now and, if many, continued from the queue. */
export async function deleteConversation(who: Principal, id: string, deadline: number) {
  const job = newJob(purgeConversation, who.accountId, { contactId: who.contactId, conversationId: id });
  const deleted = await conversations.removeConversation(who, id, [jobPut(job)]);
  if (!deleted) throw notFound('conversation', id, 'id');
  await startJob(purgeConversation, job, deadline);
}
