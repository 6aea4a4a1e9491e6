import { createAccount } from '#shared/data/accounts';
import { createContact } from '#shared/data/contacts';
import { createGroup } from '#shared/data/groups';
import { issueToken } from '#shared/data/tokens';

export interface DemoSeed {
  accountId: string;
  /** The authenticated demo user. */
  userContactId: string;
  contactIds: Record<string, string>;
  groupId: string;
  token: string;
}

/** A demo account to try the API with: a user, two contacts to talk to and a group. */
export async function seedDemo(): Promise<DemoSeed> {
  const account = await createAccount({ name: 'Demo' });
  const accountId = account.account_id;
  const [alice, bob, carol] = await Promise.all(
    [
      { username: 'alice', phoneNumber: '+15550100001' },
      { username: 'bob', phoneNumber: '+15550100002' },
      { username: 'carol', phoneNumber: '+15550100003' },
    ].map((c) => createContact({ accountId, ...c, avatarUrl: `https://example.com/avatars/${c.username}.png` })),
  );
  const group = await createGroup({ accountId, name: 'team' });
  const token = await issueToken({ accountId, contactId: alice!.id });
  return {
    accountId,
    userContactId: alice!.id,
    contactIds: { alice: alice!.id, bob: bob!.id, carol: carol!.id },
    groupId: group.id,
    token,
  };
}
