import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
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
