import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { db, tableName } from '#shared/db/client';
import { transactNamed } from '#shared/db/batch';
import { getItem } from '#shared/db/items';
import { conversationIdFor, putConversation, threadOf } from '#shared/data/conversations';
import { contentKey, entryKey, type NewMessage } from '#shared/data/message-items';
import { contentPut, participantParts } from '#shared/data/messages';
import { getMessage, listMessages, sendMessage, updateMessage } from '#shared/messaging/messages';
import { derivedId } from '#shared/util/ids';
import { migrateCopies } from '../../scripts/migrations/copies.ts';
import { aTenant } from '../steps/given.ts';
import { onTableOfItsOwn } from '../steps/own-table.ts';

// A table of its own: the migration scans the whole table.
onTableOfItsOwn('migrate-copies');

describe('migrate copies (0.4 → 0.5)', () => {
  it("copies 0.4's one-to-one messages into both entries, mends a copy a 0.4 function left behind, and can run again", async () => {
    // Given alice and bob's thread: a message as 0.4 stored it (no copies), and a copied one that a 0.4 function then edited
    const t = await aTenant();
    const alice = { accountId: t.accountId, contactId: t.userContactId };
    const bob = { accountId: t.accountId, contactId: t.contactIds.bob! };
    const { conversation: mine } = await putConversation(alice, { contactId: bob.contactId });
    const { conversation: theirs } = await putConversation(bob, { contactId: alice.contactId });
    const old: NewMessage = {
      id: derivedId('msg', Date.now() - 60_000, `old-${t.accountId}`),
      account_id: t.accountId,
      thread: threadOf(mine),
      contact_id: alice.contactId,
      message: 'from 0.4',
      attachments: [],
      created_at: Math.floor(Date.now() / 1000) - 60,
      extras_bytes: 0,
    };
    expect(
      await transactNamed([
        ['message', contentPut(old)],
        ...participantParts(alice, mine.id, old),
        ...participantParts(bob, theirs.id, old),
      ]),
    ).toEqual([]);
    const sent = await sendMessage(alice, { conversation_id: mine.id, message: 'from 0.5' });
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: contentKey(t.accountId, sent.thread, sent.id),
        UpdateExpression: 'SET message = :m, updated_at = :u',
        ExpressionAttributeValues: { ':m': 'edited by 0.4', ':u': sent.created_at + 1 },
      }),
    );
    expect((await pageOf(alice, mine.id))[0]!.message).toBe('from 0.5');

    // When the migration runs
    expect(await migrateCopies()).toEqual({ copied: 2, skipped: 0 });

    // Then both entries of both messages carry them, and each page shows each message as reading it by id does
    for (const [owner, conversationId] of [
      [alice, mine.id],
      [bob, theirs.id],
    ] as const) {
      expect((await getItem(entryKey(owner, conversationId, old.id), true))?.message).toBe('from 0.4');
      const page = await pageOf(owner, conversationId);
      expect(page.map((m) => [m.id, m.message])).toEqual([
        [sent.id, 'edited by 0.4'],
        [old.id, 'from 0.4'],
      ]);
      for (const m of page) expect(m).toEqual({ ...(await getMessage(owner, m.id)), copied: true });
    }
    // And later changes keep the copies in step: bob's read reaches alice's view of 0.4's message
    await updateMessage(bob, old.id, { read: true });
    expect((await pageOf(alice, mine.id))[1]!.read_at).toEqual(expect.any(Number));
    expect((await conversationIdFor(bob, alice.contactId))!).toBe(theirs.id);

    // And a second run changes nothing
    expect(await migrateCopies()).toEqual({ copied: 2, skipped: 0 });
    expect((await pageOf(bob, theirs.id)).map((m) => m.message)).toEqual(['edited by 0.4', 'from 0.4']);
  });
});

const pageOf = async (owner: { accountId: string; contactId: string }, conversationId: string) =>
  (await listMessages(owner, { conversation_id: conversationId, limit: 10 })).items;
