import { conversationIdsFor } from '#shared/data/conversations';
import { batchGet } from '#shared/db/batch';
import { keys } from '#shared/db/keys';
import type { Tenant } from './given.ts';

/** Each member's group conversation and the message's entry in it: how many members hold it, and their unread counts. */
export async function holdings(t: Tenant, members: string[], messageId: string) {
  const conversations = await conversationIdsFor(t.accountId, members, t.groupId);
  const entries = await batchGet(
    [...conversations].map(([user, conv]) => keys.message.key({ acct: t.accountId, user, conv, msg: messageId })),
    true,
  );
  const views = await batchGet(
    [...conversations].map(([user, conv]) => keys.conversation.key({ acct: t.accountId, user, conv })),
    true,
  );
  return { conversations: conversations.size, entries: entries.length, unread: views.map((v) => Number(v.unread_count)) };
}
