import { transactNamed } from '#shared/db/batch';
import { attr, condition } from '#shared/db/expression';
import { getItem } from '#shared/db/items';
import { keys } from '#shared/db/keys';
import { scanPages } from '#shared/db/scan';
import { threadOf, toConversation } from '#shared/data/conversations';
import type { NewMessage } from '#shared/data/message-items';
import { contentPut, participantParts } from '#shared/data/messages';

/**
 * 0.2 → 0.3: a 0.2 message is whole in its sender's conversation partition
 * (`type` `message`, sort key `#MSG#<msg>`). Each becomes a message stored
 * once in its thread plus the sender's entry and locator, as 0.3 writes a
 * send (nothing is delivered to the other participant: 0.2 never did).
 * Idempotent: a message already moved is left as it is, so the command can
 * be run again after an interruption. Reactions, attachments and edits move
 * with the message; 0.2's `read_at` (the sender's own mark) is dropped.
 */
export async function migrateThreads(log: (line: string) => void = () => undefined): Promise<{ moved: number; skipped: number }> {
  let moved = 0;
  let skipped = 0;
  for await (const page of scanPages(condition`${attr('type')} = ${'message'} AND begins_with(sk, ${keys.message.skPrefix})`)) {
    for (const old of page) {
      const owner = { accountId: old.account_id as string, contactId: old.contact_id as string };
      const conversation = await getItem(
        keys.conversation.key({ acct: owner.accountId, user: owner.contactId, conv: old.conversation_id as string }),
        true,
      );
      if (!conversation) {
        skipped++;
        continue;
      }
      const message: NewMessage = {
        id: old.id as string,
        account_id: owner.accountId,
        thread: threadOf(toConversation(conversation)),
        contact_id: owner.contactId,
        message: old.message as string,
        attachments: (old.attachments as NewMessage['attachments']) ?? [],
        created_at: Number(old.created_at),
        extras_bytes: Number(old.extras_bytes ?? 0),
      };
      // What the message keeps: its text, reactions, attachments, edit time and size.
      const kept = Object.fromEntries(
        Object.entries(old).filter(([name]) => !['pk', 'sk', 'type', 'conversation_id', 'read_at', 'gsi2pk', 'gsi2sk'].includes(name)),
      );
      const content = contentPut(message).Put!;
      const [entryPart, locator] = participantParts(owner, old.conversation_id as string, message);
      const entry = entryPart![1];
      const failed = await transactNamed([
        ['content', { Put: { ...content, Item: { ...content.Item, ...kept, thread: message.thread } } }],
        // The entry replaces the 0.2 item under the same key, on condition that it still is the 0.2 item.
        [
          'entry',
          {
            Put: {
              ...entry.Put!,
              ConditionExpression: '#type = :message',
              ExpressionAttributeNames: { '#type': 'type' },
              ExpressionAttributeValues: { ':message': 'message' },
            },
          },
        ],
        // The 0.2 locator is rewritten (0.3's adds the thread).
        [locator![0], { Put: { ...locator![1].Put!, ConditionExpression: undefined } }],
      ]);
      if (failed.length === 0) moved++;
      else skipped++;
    }
    log(`moved ${moved}, skipped ${skipped}`);
  }
  return { moved, skipped };
}
