import { describe, expect, it } from 'vitest';
import { findConversation } from '#shared/data/conversations';
import { openConversation } from '#shared/messaging/conversations';
import { sendMessage } from '#shared/messaging/messages';
import { readThrough } from '#shared/messaging/read-state';
import { conversationIdFor } from '#shared/data/conversations';
import { aTenant } from '../steps/given.ts';

/**
 * A read reaches every message up to its mark, however large they are: a
 * Query stops at 1 MB read, and one-to-one entries carry their messages, so
 * a range of long messages takes more than one call to read.
 */
describe('reading a range of long one-to-one messages', () => {
  it('reads them all: the range is read past the 1 MB a Query returns', { timeout: 120_000 }, async () => {
    // Given bob has 120 unread messages from alice of 4,096 three-byte characters each (12 KB a copy: 1.4 MB in all)
    const t = await aTenant();
    const alice = { accountId: t.accountId, contactId: t.userContactId };
    const bob = { accountId: t.accountId, contactId: t.contactIds.bob! };
    const { conversation } = await openConversation(alice, { contact_id: bob.contactId });
    const text = '語'.repeat(4096);
    let last = '';
    for (let i = 0; i < 120; i++) last = (await sendMessage(alice, { conversation_id: conversation.id, message: text })).id;
    const bobs = (await findConversation(bob, (await conversationIdFor(bob, alice.contactId))!))!;
    expect(bobs.unread_count).toBe(120);
    // When he reads through the newest
    await readThrough(bob, bobs, last);
    // Then nothing is left unread
    expect((await findConversation(bob, bobs.id))!.unread_count).toBe(0);
  });
});
