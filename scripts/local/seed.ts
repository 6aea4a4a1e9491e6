import { createAccount } from '#shared/data/accounts';
import { createContact } from '#shared/data/contacts';
import { addMember } from '#shared/data/group-members';
import { createGroup } from '#shared/data/groups';
import { createSecretKey } from '#shared/data/secret-keys';
import { issueToken } from '#shared/data/tokens';

export interface DemoSeed {
  accountId: string;
  /** The authenticated demo user. */
  userContactId: string;
  contactIds: Record<string, string>;
  groupId: string;
  /** alice's token. */
  token: string;
  /** bob's token: the other side of the demo's conversations. */
  token2: string;
  /** The account's secret key: what the app's backend calls the platform endpoints with. */
  secretKey: string;
}

/**
 * A demo account to try the API with: a user (alice), two contacts to talk to
 * (bob, with a token of his own, and carol), a group of all three, and a
 * secret key for the platform endpoints.
 */
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
  await Promise.all([alice, bob, carol].map((c) => addMember(accountId, group.id, c!.id)));
  const [token, token2] = await Promise.all([alice, bob].map((c) => issueToken({ accountId, contactId: c!.id })));
  const { secret_key: secretKey } = await createSecretKey(accountId);
  return {
    accountId,
    userContactId: alice!.id,
    contactIds: { alice: alice!.id, bob: bob!.id, carol: carol!.id },
    groupId: group.id,
    token: token!,
    token2: token2!,
    secretKey,
  };
}
