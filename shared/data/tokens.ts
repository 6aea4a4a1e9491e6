import { createHash, randomBytes } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, putNew, tableName } from '#shared/db/client';
import { keys } from '#shared/db/keys';
import { nowSeconds } from '#shared/util/ids';

export interface Principal {
  accountId: string;
  contactId: string;
}

/** Only the hash is stored, so a table dump yields no usable token. */
export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

/** 32 random bytes, URL-safe; the prefix makes leaked tokens easy to scan for. */
export const generateToken = () => `tok_${randomBytes(32).toString('base64url')}`;

export const TOKEN_PATTERN = /^tok_[A-Za-z0-9_-]{43}$/;

/**
 * An Authorization header that can carry a token: API Gateway's identity
 * validation (Java regex syntax, so no flags) and the local gateway refuse
 * anything else with 401 before the authorizer runs.
 */
export const AUTHORIZATION_PATTERN = new RegExp(`^[Bb][Ee][Aa][Rr][Ee][Rr]\\s+${TOKEN_PATTERN.source.slice(1, -1)}\\s*$`);

export async function issueToken(principal: Principal): Promise<string> {
  const token = generateToken();
  await putNew({
    ...keys.token(hashToken(token)),
    type: 'token',
    account_id: principal.accountId,
    contact_id: principal.contactId,
    created_at: nowSeconds(),
  });
  return token;
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
export async function revokeToken(token: string): Promise<boolean> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.token(hashToken(token)),
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
