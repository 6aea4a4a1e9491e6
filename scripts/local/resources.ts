import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceInUseException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { createTableInput, tableDefinition } from '#shared/db/table-definition';
import { deadLetterUrlEnv, queues, queueUrlEnv } from '#shared/queues';

/** Creates the table exactly as the CDK stack defines it (same definition module). */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await client.send(new CreateTableCommand(createTableInput(tableName)));
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: tableDefinition.timeToLiveAttribute, Enabled: true },
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  // A table kept from before the change stream (0.3) gets it now; events start from here.
  if (!Table?.StreamSpecification?.StreamEnabled) {
    await client.send(
      new UpdateTableCommand({ TableName: tableName, StreamSpecification: createTableInput(tableName).StreamSpecification }),
    );
  }
}

/** Creates every queue of the shared definitions with its dead-letter queue; returns env vars with their URLs. */
export async function ensureQueues(
  client: SQSClient,
  prefix: string,
  /** Tests shorten the visibility timeout to see redeliveries in seconds, not minutes. */
  visibilityTimeoutSeconds?: number,
): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  for (const [key, definition] of Object.entries(queues)) {
    const visibility = String(visibilityTimeoutSeconds ?? definition.visibilityTimeoutSeconds);
    const dlq = await client.send(
      new CreateQueueCommand({ QueueName: `${prefix}-${definition.name}-dlq`, Attributes: { VisibilityTimeout: visibility } }),
    );
    const dlqArn = await client.send(new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl!, AttributeNames: ['QueueArn'] }));
    const queue = await client.send(
      new CreateQueueCommand({
        QueueName: `${prefix}-${definition.name}`,
        Attributes: {
          VisibilityTimeout: visibility,
          RedrivePolicy: JSON.stringify({
            deadLetterTargetArn: dlqArn.Attributes!.QueueArn,
            maxReceiveCount: definition.maxReceiveCount,
          }),
        },
      }),
    );
    env[queueUrlEnv(key as keyof typeof queues)] = queue.QueueUrl!;
    env[deadLetterUrlEnv(key as keyof typeof queues)] = dlq.QueueUrl!;
  }
  return env;
}
