/**
 * The floor of a cold start: the DynamoDB document client and the SQS client,
 * and nothing else. Every handler of this design loads at least these, so
 * `npm run bench` builds this file with the stack's esbuild flags and times
 * each function's import against it.
 */
export { DynamoDBClient } from '@aws-sdk/client-dynamodb';
export { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
export { SQSClient, SendMessageCommand } from '@aws-sdk/client-sqs';
