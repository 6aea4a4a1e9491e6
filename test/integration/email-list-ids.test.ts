import { afterEach, describe, expect, it, vi } from 'vitest';
import { createEmailList, listEmailLists } from '#shared/data/email-lists';
import { updateItem } from '#shared/db/items';
import { batchPut } from '#shared/db/batch';
import { update } from '#shared/db/expression';
import { keys } from '#shared/db/keys';
import { newNumericIds, resetNumericIds } from '#shared/data/numeric-ids';
import { aTenant } from '../steps/given.ts';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('email list ids against DynamoDB Local', () => {
  it('are unique, increase with creation and follow page order under 30 concurrent creates in one millisecond', async () => {
    // Given an account, and an email id made before (the block counter's ids)
    const t = await aTenant();
    resetNumericIds();
    const [emailId] = await newNumericIds(1);

    // When it creates one list, then 30 at once, all in the same millisecond (their random parts decide who is first)
    const first = await createEmailList(t.accountId, { name: 'first' });
    vi.spyOn(Date, 'now').mockReturnValue(Date.now() + 1);
    const burst = await Promise.all(Array.from({ length: 30 }, (_, i) => createEmailList(t.accountId, { name: `burst ${i}` })));

    // Then every id is a distinct safe integer, above the block counter's and the first list's
    const ids = burst.map((l) => l.id);
    expect(new Set([first.id, ...ids]).size).toBe(31);
    for (const id of [first.id, ...ids]) expect(Number.isSafeInteger(id) && id > emailId! && id >= first.id).toBe(true);
    // And the account's page lists them in ascending id order
    const page = await listEmailLists(t.accountId, 1);
    const listed = page!.lists.map((l) => l.id);
    expect(listed).toHaveLength(31);
    expect(listed).toEqual([...listed].sort((a, b) => a - b));
  });

  it('goes past a larger id another create of the account recorded (a clock behind)', async () => {
    // Given an account whose newest list id was made 5 ms in this process's future
    const t = await aTenant();
    const ahead = (Date.now() + 5) * 2048 + 100;
    await updateItem(keys.accountLists.key({ acct: t.accountId }), update().set`last_list_id = ${ahead}`);

    // When it creates a list
    const list = await createEmailList(t.accountId, { name: 'behind' });

    // Then the new id is past it
    expect(list.id).toBeGreaterThan(ahead);
  });

  it("takes another id when another account's list holds the same one", async () => {
    // Given every id of one millisecond already guarded (lists of other accounts)
    const t = await aTenant();
    const now = Date.now();
    const taken = Array.from({ length: 2048 }, (_, i) => now * 2048 + i);
    await batchPut(taken.map((id) => ({ ...keys.listIdGuard.key({ list: id }), expires_at: Math.floor(now / 1000) + 60 })));

    // When the account creates a list whose first try falls in that millisecond
    vi.spyOn(Date, 'now')
      .mockReturnValueOnce(now)
      .mockReturnValue(now + 1);
    const list = await createEmailList(t.accountId, { name: 'collision' });

    // Then it gets an id of the next millisecond, and the account's page shows it once
    expect(list.id).toBeGreaterThanOrEqual((now + 1) * 2048);
    const page = await listEmailLists(t.accountId, 1);
    expect(page!.lists.map((l) => l.id)).toEqual([list.id]);
    expect(page!.position).toMatchObject({ total: 1 });
  });
});
