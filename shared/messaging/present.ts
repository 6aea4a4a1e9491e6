import type { Contact } from '#shared/data/contacts';
import { getContacts } from '#shared/data/contacts';
import { cachedContacts } from '#shared/messaging/contact-cache';
import type { Conversation } from '#shared/data/conversations';
import type { Message } from '#shared/data/message-items';
import { presentReactions } from '#shared/messaging/reactions';

/** The public shapes: exactly the documented fields, nothing internal. */
export const presentConversation = (c: Conversation) => ({
  id: c.id,
  contact_id: c.contact_id,
  group_id: c.group_id,
  pinned_message_id: c.pinned_message_id,
  is_pinned: c.is_pinned,
  is_muted: c.is_muted,
  last_active_at: c.last_active_at,
  last_opened_at: c.last_opened_at,
  created_at: c.created_at,
  archived_at: c.archived_at,
  unread_count: c.unread_count,
});

/** The contact object: a message's `contact`, and what the contact endpoints answer. */
export const presentContact = (c: Contact) => ({
  id: c.id,
  username: c.username,
  phone_number: c.phone_number,
  avatar_url: c.avatar_url,
  last_active_at: c.last_active_at,
  created_at: c.created_at,
});

const presentMessage = (m: Message, contact: Contact | undefined) => ({
  id: m.id,
  conversation_id: m.conversation_id,
  contact: contact
    ? presentContact(contact)
    : { id: m.contact_id, username: null, phone_number: null, avatar_url: null, last_active_at: null, created_at: null },
  message: m.message,
  reactions: presentReactions(m.reactions),
  attachments: m.attachments.map(({ id, type, url, name, mime_type, size, file_id }) => ({
    id,
    type,
    url,
    name,
    mime_type,
    size,
    file_id: file_id ?? null,
  })),
  read_at: m.read_at,
  created_at: m.created_at,
  updated_at: m.updated_at,
});

export type ContactLoader = (accountId: string, contactIds: string[]) => Promise<Map<string, Contact>>;

/**
 * Embeds each sender's contact record: as read now (one batch read) after a
 * write, from the container's contact cache on reads, or by the caller's
 * `load` (the realtime consumer reads each sender once per batch).
 */
export async function presentMessages(
  accountId: string,
  messages: Message[],
  { fresh = false, load = fresh ? getContacts : cachedContacts }: { fresh?: boolean; load?: ContactLoader } = {},
) {
  const senders = [...new Set(messages.map((m) => m.contact_id))];
  const contacts = await load(accountId, senders);
  return messages.map((m) => presentMessage(m, contacts.get(m.contact_id)));
}

export const listResponse = <T>(data: T[], hasMore: boolean) => ({ has_more: hasMore, data });
