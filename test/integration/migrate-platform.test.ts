import { describe, expect, it } from 'vitest';
import { batchPut } from '#shared/db/batch';
import { keys } from '#shared/db/keys';
import { findCaller, hashToken } from '#shared/data/tokens';
import { listContacts } from '#shared/data/contacts';
import { groupsOf } from '#shared/data/group-members';
import { listGroups } from '#shared/data/groups';
import { createContact, deleteContact } from '#shared/platform/contacts';
import { newId } from '#shared/util/ids';
import { migratePlatform } from '../../scripts/migrations/platform.ts';
import { onTableOfItsOwn } from '../steps/own-table.ts';

// A table of its own: the migration scans the whole table.
onTableOfItsOwn('migrate-platform');

describe('migrate platform (0.3 → 0.4)', () => {
  it('lists 0.3 contacts and groups, guards their usernames, and lets a contact delete find its tokens and groups', async () => {
    // Given items as 0.3 wrote them: a contact and a group without list entries, a member without
    // the contact's list of groups, a token in the account-wide token index
    const acct = newId('acct');
    const ct = newId('ct');
    const grp = newId('grp');
    const tkn = newId('tkn');
    const token = `tok_${'a'.repeat(43)}`;
    await batchPut([
      { ...keys.account.key({ acct }), type: 'account', account_id: acct, name: 'old', created_at: 1 },
      {
        ...keys.contact.key({ acct, ct }),
        type: 'contact',
        id: ct,
        account_id: acct,
        username: 'Olga',
        phone_number: null,
        avatar_url: null,
        last_active_at: null,
        created_at: 1,
      },
      {
        ...keys.group.key({ acct, grp }),
        ...keys.groupById.entry({ grp }),
        type: 'group',
        id: grp,
        account_id: acct,
        name: 'old',
        created_at: 1,
      },
      { ...keys.groupMember.key({ acct, grp, ct }), contact_id: ct, added_at: 1 },
      {
        ...keys.token.key({ token_hash: hashToken(token) }),
        gsi1pk: `ACC#${acct}#TOKENS`,
        gsi1sk: tkn,
        ...keys.tokenById.entry({ tok: tkn }),
        type: 'token',
        token_id: tkn,
        account_id: acct,
        contact_id: ct,
        created_at: 1,
      },
    ]);
    const page = { limit: 10 };
    expect((await listContacts(acct, page)).items).toEqual([]);

    // When the migration runs, twice
    expect(await migratePlatform()).toEqual({ contacts: 1, groups: 1, members: 1, tokens: 1, username_conflicts: 0 });
    expect(await migratePlatform()).toEqual({ contacts: 0, groups: 0, members: 0, tokens: 0, username_conflicts: 0 });

    // Then the contact and the group are listed, the username is taken in any case, the contact's groups are found
    expect((await listContacts(acct, page)).items.map((c) => c.id)).toEqual([ct]);
    expect((await listGroups(acct, page)).items.map((g) => g.id)).toEqual([grp]);
    await expect(createContact({ accountId: acct }, { username: 'OLGA' })).rejects.toMatchObject({ code: 'username_taken' });
    expect(await groupsOf(acct, ct, 10)).toEqual([grp]);
    // And deleting the contact revokes its 0.3 token
    expect(await findCaller(token)).toMatchObject({ kind: 'user', contactId: ct });
    await deleteContact({ accountId: acct }, ct, Date.now() + 10_000);
    expect(await findCaller(token)).toBeUndefined();
    expect(await groupsOf(acct, ct, 10)).toEqual([]);
  });
});
