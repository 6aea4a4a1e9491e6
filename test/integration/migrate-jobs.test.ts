import { describe, expect, it } from 'vitest';
import { dueJobs, getJob } from '#shared/data/jobs';
import { batchPut } from '#shared/db/batch';
import { parseItem } from '#shared/db/item-schema';
import { getItem } from '#shared/db/items';
import { fanout } from '#shared/messaging/fanout';
import { purgeList } from '#shared/purge/list';
import { newId } from '#shared/util/ids';
import { migrateJobs } from '../../scripts/migrations/jobs.ts';
import { onTableOfItsOwn } from '../steps/own-table.ts';

// A table of its own: the migration scans the whole table.
onTableOfItsOwn('migrate-jobs');

describe('migrate jobs (0.3 → 0.4)', () => {
  it('turns fan-out and purge records into durable jobs: delivered ones kept, unfinished ones due at once', async () => {
    // Given records as 0.3 wrote them: a delivered fan-out, one halfway through, and an unfinished list purge
    const acct = newId('acct');
    const [delivered, halfway] = [newId('msg'), newId('msg')];
    const fanoutItem = (msg: string) => ({
      pk: `ACC#${acct}#FANOUT#${msg}`,
      sk: 'FANOUT',
      type: 'fanout',
      account_id: acct,
      message_id: msg,
      group_id: 'grp_1',
      sender: 'ct_a',
      created_at: 1_700_000_000,
      recipients: ['ct_b', 'ct_c'],
      stage: 'deliver',
    });
    await batchPut([
      { ...fanoutItem(delivered), done_count: 24 },
      { ...fanoutItem(halfway), done_count: 1, gsi2pk: 'FANOUT#PENDING', gsi2sk: '001700000000000' },
      {
        pk: `ACC#${acct}#PURGE#LIST#42`,
        sk: 'PURGE',
        type: 'purge',
        job: { kind: 'purge-list', accountId: acct, listId: 42, chain: 'old-chain' },
        created_at_ms: 1_700_000_000_000,
        lease_owner: 'old-chain',
        lease_until: 1_700_000_180_000,
        gsi2pk: 'PURGE#PENDING',
        gsi2sk: '001700000000000',
      },
    ]);

    // When the migration runs, twice
    expect(await migrateJobs()).toEqual({ fanouts: 2, purges: 1 });
    expect(await migrateJobs()).toEqual({ fanouts: 0, purges: 0 });

    // Then the delivered fan-out is a finished job, its recipients kept for a retraction
    const kept = await getJob({ accountId: acct, subject: `MSG#${delivered}` });
    expect(kept).toMatchObject({ kind: 'fanout', cursor: 24, pending: false });
    expect(parseItem(fanout.payload, kept!.payload)).toEqual({
      messageId: delivered,
      groupId: 'grp_1',
      sender: 'ct_a',
      createdAt: 1_700_000_000,
      recipients: ['ct_b', 'ct_c'],
    });
    // And the unfinished ones are due, with no chain holding them, as the sweeper will find them
    expect(await getJob({ accountId: acct, subject: `MSG#${halfway}` })).toMatchObject({ kind: 'fanout', cursor: 1, pending: true });
    const purge = await getJob({ accountId: acct, subject: 'LIST#42' });
    expect(purge).toMatchObject({ kind: 'purge-list', pending: true });
    expect(purge!.holder).toBeUndefined();
    expect(parseItem(purgeList.payload, purge!.payload)).toEqual({ listId: 42 });
    const due = (await dueJobs(Date.now() + 1)).map((j) => j.subject).sort();
    expect(due).toEqual([`MSG#${halfway}`, 'LIST#42'].sort());
    // And the old items are gone
    expect(await getItem({ pk: `ACC#${acct}#FANOUT#${delivered}`, sk: 'FANOUT' }, true)).toBeUndefined();
    expect(await getItem({ pk: `ACC#${acct}#PURGE#LIST#42`, sk: 'PURGE' }, true)).toBeUndefined();
  });
});
