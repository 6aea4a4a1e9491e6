import { describe, expect, it } from 'vitest';
import { batchPut } from '#shared/db/batch';
import { keys } from '#shared/db/keys';
import { putConversation } from '#shared/data/conversations';
import { getMessage, listMessages } from '#shared/messaging/messages';
import { newId } from '#shared/util/ids';
import { migrateThreads } from '../../scripts/migrations/threads.ts';
import { aTenant } from '../steps/given.ts';
import { onTableOfItsOwn } from '../steps/own-table.ts';

// A table of its own: the migration scans the whole table.
onTableOfItsOwn('migrate');

describe('migrate threads (0.2 → 0.3)', () => {
  it('moves a 0.2 message into its thread, keeping its reactions and edits, and can run again', async () => {
    // Given a conversation holding a message as 0.2 stored it: whole, in the sender's conversation partition
    const t = await aTenant();
    const alice = { accountId: t.accountId, contactId: t.userContactId };
    const { conversation } = await putConversation(alice, { contactId: t.contactIds.bob! });
    const id = newId('msg');
    const values = { acct: t.accountId, user: t.userContactId, conv: conversation.id, msg: id };
    await batchPut([
      {
        ...keys.message.key(values),
        ...keys.userMessages.entry(values),
        type: 'message',
        id,
        account_id: t.accountId,
        conversation_id: conversation.id,
        contact_id: t.userContactId,
        message: 'from 0.2',
        reactions: { ok: [1, t.contactIds.bob!] },
        attachments: [],
        read_at: 1_700_000_000,
        updated_at: 1_700_000_001,
        created_at: 1_700_000_000,
        extras_bytes: 20,
      },
      { ...keys.messageLocator.key(values), conversation_id: conversation.id },
    ]);
    // When the migration runs (twice: the second finds nothing left to move)
    expect((await migrateThreads()).moved).toBeGreaterThanOrEqual(1);
    await migrateThreads();
    // Then 0.3 reads it, by id and in its conversation, with what it had
    const read = await getMessage(alice, id);
    expect(read).toMatchObject({
      id,
      conversation_id: conversation.id,
      message: 'from 0.2',
      reactions: [{ name: 'ok', contacts: [t.contactIds.bob] }],
      updated_at: 1_700_000_001,
      read_at: null,
    });
    const page = await listMessages(alice, { conversation_id: conversation.id, limit: 10 });
    expect(page.items.map((m) => m.id)).toEqual([id]);
  });
});
