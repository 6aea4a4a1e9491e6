import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '#shared/config';

let client: DynamoDBDocumentClient | undefined;

/**
 * One document client per container. The endpoint comes from the SDK's own
 * AWS_ENDPOINT_URL_DYNAMODB variable, so DynamoDB Local needs no code path.
 */
export function db(): DynamoDBDocumentClient {
  client ??= DynamoDBDocumentClient.from(new DynamoDBClient({ region: config().region }), {
    marshallOptions: { removeUndefinedValues: true },
  });
  return client;
}

export const tableName = () => config().tableName;

export function resetDb(): void {
  client = undefined;
}

/** Stores a new item; the condition turns an (astronomically unlikely) id collision into an error, not an overwrite. */
export async function putNew(item: Record<string, unknown> & { pk: string; sk: string }): Promise<void> {
  await db().send(new PutCommand({ TableName: tableName(), Item: item, ConditionExpression: 'attribute_not_exists(pk)' }));
}
