import { putNew, query, updateItem } from '#shared/db/items';
import { keys } from '#shared/db/keys';
import { generateSecretKey, hashToken, revocation } from '#shared/data/tokens';
import { newId, nowSeconds } from '#shared/util/ids';

/**
 * An account's secret keys (`sk_...`): the credential of the account's own
 * backend. Stored beside the user tokens under the hash of the key, so one
 * read tells any bearer credential apart.
 */
export interface SecretKeyInfo {
  key_id: string;
  account_id: string;
  created_at: number;
  revoked_at: number | null;
}

/** Most keys an account lists: enough to rotate, few enough to read in one Query. */
export const MAX_SECRET_KEYS = 100;

/** A new key; the key itself is returned only here. */
export async function createSecretKey(accountId: string): Promise<{ key_id: string; secret_key: string }> {
  const secretKey = generateSecretKey();
  const id = newId('key');
  await putNew({
    ...keys.token.key({ token_hash: hashToken(secretKey) }),
    ...keys.secretKeys.entry({ acct: accountId, key: id }),
    ...keys.secretKeyById.entry({ key: id }),
    type: 'secret_key',
    key_id: id,
    account_id: accountId,
    created_at: nowSeconds(),
  });
  return { key_id: id, secret_key: secretKey };
}

const present = (item: Record<string, unknown>): SecretKeyInfo => ({
  key_id: String(item.key_id),
  account_id: String(item.account_id),
  created_at: Number(item.created_at),
  revoked_at: item.revoked_at === undefined ? null : Number(item.revoked_at),
});

/** The account's keys, newest first; never a key itself. */
export async function listSecretKeys(accountId: string): Promise<SecretKeyInfo[]> {
  const items = await query(
    { index: keys.secretKeys.index, partition: keys.secretKeys.partition({ acct: accountId }), forward: false },
    MAX_SECRET_KEYS,
  );
  return items.map(present);
}

/** Revokes the key with this id (the first revocation time stays); undefined when there is none. */
export async function revokeSecretKey(keyId: string): Promise<SecretKeyInfo | undefined> {
  const [item] = await query({ index: keys.secretKeyById.index, partition: keys.secretKeyById.partition({ key: keyId }) }, 1, 1);
  if (!item) return undefined;
  return present(await updateItem({ pk: String(item.pk), sk: String(item.sk) }, revocation(), 'ALL_NEW'));
}
