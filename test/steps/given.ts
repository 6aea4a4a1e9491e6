import { createContact } from '#shared/data/contacts';
import { addMember } from '#shared/data/group-members';
import { conversationItem, newConversation, putConversation, threadOf, type Conversation } from '#shared/data/conversations';
import type { NewMessage } from '#shared/data/message-items';
import { contentPut, participantParts } from '#shared/data/messages';
import { issueToken } from '#shared/data/tokens';
import { batchPut, transactNamed } from '#shared/db/batch';
import { newId } from '#shared/util/ids';
import { seedDemo, type DemoSeed } from '../../scripts/local/seed.ts';

/**
 * Given steps write straight to the table (DynamoDB Local, or the deployed
 * table named by TABLE_NAME), the way the admin command line does.
 */
export type Tenant = DemoSeed;

/** A fresh account with a user (alice), two contacts (bob, carol), a group and alice's token. */
export const aTenant = (): Promise<Tenant> => seedDemo();

export async function anotherUserOf(tenant: Tenant, username = 'dave') {
  const contact = await createContact({ accountId: tenant.accountId, username });
  return { contact, token: await issueToken({ accountId: tenant.accountId, contactId: contact.id }) };
}

/**
 * `count` conversations of the tenant's user, each with a contact of its own
 * (ids only: listing never reads the contacts), written in bulk rather than
 * over the API; `shape(i)` sets fields of the i-th. Returned oldest first.
 */
export async function manyConversations(tenant: Tenant, count: number, shape: (i: number) => Partial<Conversation> = () => ({})) {
  const owner = { accountId: tenant.accountId, contactId: tenant.userContactId };
  const conversations = Array.from({ length: count }, (_, i): Conversation => ({
    ...newConversation(owner, { contactId: newId('ct') }),
    ...shape(i),
  }));
  const items = conversations.map(conversationItem);
  const parallel = 8;
  const slice = Math.ceil(items.length / parallel);
  await Promise.all(Array.from({ length: parallel }, (_, i) => batchPut(items.slice(i * slice, (i + 1) * slice))));
  return conversations;
}

/** `count` more users of the tenant's account, members of its group, each with a token; alice, bob and carol are members already. */
export async function groupMembersOf(tenant: Tenant, count: number, { tokens = true } = {}) {
  const users: { contactId: string; token?: string }[] = [];
  for (let i = 0; i < count; i += 25) {
    users.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(25, count - i) }, async (_, j) => {
          const contact = await createContact({ accountId: tenant.accountId, username: `member${i + j}` });
          await addMember(tenant.accountId, tenant.groupId, contact.id);
          return {
            contactId: contact.id,
            token: tokens ? await issueToken({ accountId: tenant.accountId, contactId: contact.id }) : undefined,
          };
        }),
      )),
    );
  }
  return users;
}

/** A conversation of alice's with bob holding `count` messages of hers, written in bulk (a purge's subject). */
export async function conversationWithMessages(t: Tenant, count: number): Promise<string> {
  const alice = { accountId: t.accountId, contactId: t.userContactId };
  const { conversation } = await putConversation(alice, { contactId: t.contactIds.bob! });
  const now = Date.now();
  for (let i = 0; i < count; i += 25) {
    await Promise.all(
      Array.from({ length: Math.min(25, count - i) }, () => {
        const message: NewMessage = {
          id: newId('msg', now),
          account_id: t.accountId,
          thread: threadOf(conversation),
          contact_id: t.userContactId,
          message: 'bulk',
          attachments: [],
          created_at: Math.floor(now / 1000),
          extras_bytes: 0,
        };
        return transactNamed([['message', contentPut(message)], ...participantParts(alice, conversation.id, message)]);
      }),
    );
  }
  return conversation.id;
}
