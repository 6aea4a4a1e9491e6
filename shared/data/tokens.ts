import { createHash, randomBytes } from 'node:crypto';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, putNew, tableName } from '#shared/db/client';
import { keys } from '#shared/db/keys';
import { newId, nowSeconds } from '#shared/util/ids';

export interface Principal {
  accountId: string;
  contactId: string;
}

/** Only the hash is stored, so a table dump yields no usable token. */
export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

/** 32 random bytes, URL-safe; the prefix makes leaked tokens easy to scan for. */
export const generateToken = () => `tok_${randomBytes(32).toString('base64url')}`;

export const TOKEN_PATTERN = /^tok_[A-Za-z0-9_-]{43}$/;

export async function issueToken(principal: Principal): Promise<string> {
  return (await issueTokenWithId(principal)).token;
}

/** The token, shown once, and its id: what the admin command line lists and revokes it by. */
export async function issueTokenWithId(principal: Principal): Promise<{ token: string; id: string }> {
  const token = generateToken();
  const id = newId('tkn');
  await putNew({
    ...keys.token(hashToken(token)),
    ...keys.tokenIndexes(principal.accountId, id),
    type: 'token',
    token_id: id,
    account_id: principal.accountId,
    contact_id: principal.contactId,
    created_at: nowSeconds(),
  });
  return { token, id };
}

/** What may be shown about a token: never the token, nor its hash. */
export interface TokenInfo {
  id: string;
  contact_id: string;
  created_at: number;
  revoked_at: number | null;
}

const tokenInfo = (item: Record<string, unknown>): TokenInfo => ({
  id: item.token_id as string,
  contact_id: item.contact_id as string,
  created_at: item.created_at as number,
  revoked_at: (item.revoked_at as number | undefined) ?? null,
});

/** An account's tokens, oldest first (tokens issued before ids existed have none and are not listed). */
export async function listTokens(accountId: string, limit = 1000): Promise<TokenInfo[]> {
  const tokens: TokenInfo[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const out = await db().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.tokensPartition(accountId) },
        Limit: limit - tokens.length,
        ExclusiveStartKey: startKey,
      }),
    );
    tokens.push(...(out.Items ?? []).map(tokenInfo));
    startKey = out.LastEvaluatedKey;
  } while (startKey && tokens.length < limit);
  return tokens;
}

/** Revokes the token with this id; false when there is none. */
export async function revokeTokenById(tokenId: string): Promise<boolean> {
  const out = await db().send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: 'gsi2',
      KeyConditionExpression: 'gsi2pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.tokenIdPartition(tokenId) },
      Limit: 1,
    }),
  );
  const item = out.Items?.[0];
  return item ? revokeHashed(item.pk as string) : false;
}

export async function findPrincipal(token: string): Promise<Principal | undefined> {
  if (!TOKEN_PATTERN.test(token)) return undefined;
  // Consistent, so a revoked token stops working on the very next request.
  const out = await db().send(
    new GetCommand({ TableName: tableName(), Key: keys.token(hashToken(token)), ConsistentRead: true }),
  );
  if (!out.Item || out.Item.revoked_at !== undefined) return undefined;
  return { accountId: out.Item.account_id as string, contactId: out.Item.contact_id as string };
}

/** Returns false when no such token was ever issued. */
export const revokeToken = (token: string): Promise<boolean> => revokeHashed(keys.token(hashToken(token)).pk);

async function revokeHashed(pk: string): Promise<boolean> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: { pk, sk: keys.token('').sk },
        UpdateExpression: 'SET revoked_at = if_not_exists(revoked_at, :now)',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':now': nowSeconds() },
      }),
    );
    return true;
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}
