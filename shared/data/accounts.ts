import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, putNew, tableName } from '#shared/db/client';
import { keys } from '#shared/db/keys';
import { newId, nowSeconds } from '#shared/util/ids';

export interface Account {
  account_id: string;
  name: string;
  /** Validation credit balance; absent means unlimited. */
  credits?: number;
  created_at: number;
}

export async function createAccount(input: { name: string; credits?: number }): Promise<Account> {
  const account: Account = { account_id: newId('acct'), name: input.name, created_at: nowSeconds() };
  if (input.credits !== undefined) account.credits = input.credits;
  await putNew({ ...keys.account(account.account_id), type: 'account', ...account });
  return account;
}

export async function getAccount(accountId: string): Promise<Account | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.account(accountId) }));
  if (!out.Item) return undefined;
  const { account_id, name, credits, created_at } = out.Item as Account;
  return { account_id, name, created_at, ...(credits === undefined ? {} : { credits }) };
}

/** Adds to the balance atomically; returns undefined when the account does not exist. */
export async function addCredits(accountId: string, amount: number): Promise<number | undefined> {
  try {
    const out = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.account(accountId),
        UpdateExpression: 'SET credits = if_not_exists(credits, :zero) + :amount',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':zero': 0, ':amount': amount },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return out.Attributes?.credits as number;
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') return undefined;
    throw error;
  }
}

/** The account's validation credits; undefined means unlimited. */
export async function creditBalance(accountId: string): Promise<number | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.account(accountId), ConsistentRead: true }));
  const credits = out.Item?.credits;
  return credits === undefined ? undefined : Number(credits);
}

/** Transaction part: takes `amount` credits, failing the whole transaction if the balance is short. */
export const debitCredits = (accountId: string, amount: number) => ({
  TableName: tableName(),
  Key: keys.account(accountId),
  UpdateExpression: 'SET credits = credits - :n',
  ConditionExpression: 'credits >= :n',
  ExpressionAttributeValues: { ':n': amount },
});
