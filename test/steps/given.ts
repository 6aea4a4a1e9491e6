import { createContact } from '#shared/data/contacts';
import { issueToken } from '#shared/data/tokens';
import { seedDemo, type DemoSeed } from '../../scripts/local/seed.ts';

/**
 * Given steps write straight to the table (DynamoDB Local, or the deployed
 * table named by TABLE_NAME), the way the admin command line does.
 */
export type Tenant = DemoSeed;

/** A fresh account with a user (alice), two contacts (bob, carol), a group and alice's token. */
export const aTenant = (): Promise<Tenant> => seedDemo();

export async function anotherUserOf(tenant: Tenant, username = 'dave') {
  const contact = await createContact({ accountId: tenant.accountId, username });
  return { contact, token: await issueToken({ accountId: tenant.accountId, contactId: contact.id }) };
}
