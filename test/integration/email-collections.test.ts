import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { applyDeltas, BLOCK, compact, membershipDeltas, releaseTokens, reserveSeqs } from '#shared/data/collections';
import { createEmailList, getEmailList } from '#shared/data/email-lists';
import { storeEmails } from '#shared/data/email-adds';
import { deleteEmail } from '#shared/data/email-deletes';
import { listEmailsPage } from '#shared/data/emails';
import { db, tableName } from '#shared/db/client';
import { keys } from '#shared/db/keys';
import { settle } from '#shared/email/outbox';
import { aTenant } from '../steps/given.ts';
import { byCommand, countDynamoCalls } from '../steps/dynamodb-calls.ts';

const itemBytes = async (key: { pk: string; sk: string }) => {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }));
  return JSON.stringify(out.Item ?? {}).length;
};

/** Stores addresses in a list the way an add request does, without the queue. */
async function addToList(accountId: string, listId: number, addresses: string[]) {
  const chunks = await storeEmails(accountId, { kind: 'list', listId }, addresses, 0);
  const key = keys.list.key({ acct: accountId, list: listId });
  await applyDeltas(
    key,
    chunks.map((c) => ({ token: c.outbox.token, deltas: c.outbox.deltas! })),
    true,
  );
  return chunks.flatMap((c) => c.emails);
}

describe('collection page index against DynamoDB Local', () => {
  it(
    'stays under a fixed size through 10 million lifetime adds and deletes, with pages still one lookup and one Query',
    { timeout: 120_000 },
    async () => {
      // Given a list with a few real members
      const t = await aTenant();
      const list = await createEmailList(t.accountId, { name: 'history' });
      const key = keys.list.key({ acct: t.accountId, list: list.id });
      const early = await addToList(
        t.accountId,
        list.id,
        Array.from({ length: 150 }, (_, i) => `early${i}@example.com`),
      );
      const sizeBefore = await itemBytes(key);

      // When 10 million sequence numbers are handed out over its life, members joining and leaving
      // across them (one block in ten sampled, so the test stays quick)
      const lifetime = 10_000_000;
      const first = (await reserveSeqs(key, lifetime, true))!;
      const sampled = [];
      for (let block = Math.ceil(first / BLOCK); block < Math.floor((first + lifetime) / BLOCK); block += 10) sampled.push(block);
      expect(sampled.length).toBe(100);
      for (let at = 0; at < sampled.length; at += 25) {
        await Promise.all(
          sampled.slice(at, at + 25).map(async (block) => {
            const seqs = Array.from({ length: 100 }, (_, k) => block * BLOCK + k * 97);
            const joined = { token: `${Date.now()}.in${block}`, deltas: membershipDeltas(seqs, 1) };
            const left = { token: `${Date.now()}.out${block}`, deltas: membershipDeltas(seqs, -1) };
            for (const change of [joined, left]) {
              await applyDeltas(key, [change], true);
              await releaseTokens(key, [change]);
            }
            await compact(key, seqs[0]!);
          }),
        );
      }
      // And then more real members join, and some early ones leave
      const late = await addToList(
        t.accountId,
        list.id,
        Array.from({ length: 120 }, (_, i) => `late${i}@example.com`),
      );
      for (const email of early.slice(0, 30)) expect(await deleteEmail(t.accountId, email.id)).toBe(true);

      // Then the list item is as small as before the history (no per-block counter survives an emptied block)
      const sizeAfter = await itemBytes(key);
      expect(sizeAfter).toBeLessThan(sizeBefore + 200);
      expect(sizeAfter).toBeLessThan(4096);
      // And no emptied block item is left behind: only the blocks holding live members
      const blocks = await db().send(
        new QueryCommand({
          TableName: tableName(),
          IndexName: 'gsi1',
          KeyConditionExpression: 'gsi1pk = :pk',
          ExpressionAttributeValues: { ':pk': keys.blocks.partition({ collection: key.pk }) },
        }),
      );
      expect(blocks.Items!.map((b) => Number(b.n))).toEqual([120, 120]);
      // And the pages are exact: 240 live members in join order, the late ones last
      const stored = await getEmailList(t.accountId, list.id);
      expect(stored!.email_count).toBe(240);
      const page2 = await listEmailsPage(t.accountId, { kind: 'list', listId: list.id }, 2);
      const { result: page3, calls } = await countDynamoCalls(() => listEmailsPage(t.accountId, { kind: 'list', listId: list.id }, 3));
      expect(byCommand(calls)).toEqual({ GetItem: 1, Query: 1 });
      if (!page2 || page2 === 'missing' || !page3 || page3 === 'missing') throw new Error('pages missing');
      expect(page2.position).toMatchObject({ totalPages: 3, total: 240 });
      expect(page2.emails.map((e) => e.email)).toEqual([...early.slice(130).map((e) => e.email), ...late.slice(0, 80).map((e) => e.email)]);
      expect(page3.emails.map((e) => e.email)).toEqual(late.slice(80).map((e) => e.email));
    },
  );

  it('applies recorded counts exactly once, however often a crashed request is retried', async () => {
    const t = await aTenant();
    const list = await createEmailList(t.accountId, { name: 'retries' });
    const chunks = await storeEmails(t.accountId, { kind: 'list', listId: list.id }, ['x@example.com', 'y@example.com'], 1);
    const key = keys.list.key({ acct: t.accountId, list: list.id });
    const pending = chunks.map((c) => ({ token: c.outbox.token, deltas: c.outbox.deltas! }));
    // The request applied them, then died; the sweeper applies them again, twice.
    await applyDeltas(key, pending, true);
    await applyDeltas(key, pending, true);
    await settle(
      key,
      true,
      chunks.map((c) => c.outbox),
    );
    expect(await getEmailList(t.accountId, list.id)).toMatchObject({ email_count: 2, pending_count: 2, rejected_count: 1 });
    // And the tokens are gone once settled, so the item does not keep them
    const item = await db().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }));
    expect(item.Item!.applied).toBeUndefined();
  });

  it('never re-creates a deleted list when its counts arrive late', async () => {
    const t = await aTenant();
    const list = await createEmailList(t.accountId, { name: 'late counts' });
    const chunks = await storeEmails(t.accountId, { kind: 'list', listId: list.id }, ['z@example.com'], 0);
    const { deleteEmailList } = await import('#shared/data/email-lists');
    expect(await deleteEmailList(t.accountId, list.id)).toBe(true);
    expect(
      await settle(
        keys.list.key({ acct: t.accountId, list: list.id }),
        true,
        chunks.map((c) => c.outbox),
      ),
    ).toBe('gone');
    expect(await getEmailList(t.accountId, list.id)).toBeUndefined();
  });
});
