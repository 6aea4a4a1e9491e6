import { putItem, unlessConditionFails, updateItem } from '#shared/db/items';
import { attr, condition, update } from '#shared/db/expression';
import { keys } from '#shared/db/keys';
import { scanPages } from '#shared/db/scan';

/**
 * 0.3 → 0.4: the index entries the platform endpoints read, for items 0.3
 * wrote without them. Contacts enter the account's list and take their
 * username's guard (a second contact with the same username, ignoring case,
 * is reported and keeps working, unlisted by name); groups enter the
 * account's list; members enter their contact's list of groups (so deleting
 * the contact leaves them); user tokens move to their contact's list (so
 * deleting the contact revokes them). Idempotent: run it again after an
 * interruption.
 */
export async function migratePlatform(log: (line: string) => void = () => undefined) {
  const counts = { contacts: 0, groups: 0, members: 0, tokens: 0, username_conflicts: 0 };
  const wanted = condition`${attr('type')} IN (${'contact'}, ${'group'}, ${'token'}) OR begins_with(sk, ${keys.groupMember.skPrefix})`;
  for await (const page of scanPages(wanted)) {
    for (const item of page) {
      const key = { pk: String(item.pk), sk: String(item.sk) };
      const set = (entry: Record<string, string>) =>
        updateItem(key, update().set`gsi1pk = ${entry.gsi1pk}, gsi1sk = ${entry.gsi1sk}`.when`attribute_exists(pk)`);
      if (item.type === 'contact' && item.deleted_at === undefined && item.gsi1pk === undefined) {
        const acct = String(item.account_id);
        const claimed = await unlessConditionFails(
          putItem(
            { ...keys.username.key({ acct, username: String(item.username) }), contact_id: item.id },
            condition`attribute_not_exists(pk) OR contact_id = ${item.id}`,
          ).then(() => true),
        );
        if (!claimed) {
          counts.username_conflicts++;
          log(`contact ${String(item.id)}: another contact of ${acct} has the username '${String(item.username)}'`);
        }
        await set(keys.contacts.entry({ acct, ct: String(item.id) }));
        counts.contacts++;
      } else if (item.type === 'group' && item.gsi1pk === undefined) {
        await set(keys.groups.entry({ acct: String(item.account_id), grp: String(item.id) }));
        counts.groups++;
      } else if (item.type === 'token' && item.token_id !== undefined && !String(item.gsi1pk ?? '').includes('#CT#')) {
        await set(keys.contactTokens.entry({ acct: String(item.account_id), ct: String(item.contact_id), tok: String(item.token_id) }));
        counts.tokens++;
      } else if (key.sk.startsWith(keys.groupMember.skPrefix) && item.gsi1pk === undefined) {
        const member = keys.groupMember.parse(key);
        if (member) {
          await set(keys.memberships.entry({ acct: member.acct, ct: member.ct, grp: member.grp }));
          counts.members++;
        }
      }
    }
  }
  return counts;
}
