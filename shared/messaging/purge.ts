import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { config } from '#shared/config';
import { batchDelete } from '#shared/db/batch';
import { conversationMessageKeys } from '#shared/data/messages';
import { logger } from '#shared/util/logger';

const BATCH = 100;
let sqs: SQSClient | undefined;

export interface PurgeJob {
  kind: 'purge-conversation';
  accountId: string;
  conversationId: string;
}

/** Deletes message batches until none are left or the deadline (epoch ms) nears. */
export async function purgeMessages(accountId: string, conversationId: string, deadline: number): Promise<'done' | 'more'> {
  for (;;) {
    const batch = await conversationMessageKeys(accountId, conversationId, BATCH);
    if (batch.length === 0) return 'done';
    await batchDelete(batch);
    if (Date.now() > deadline) return 'more';
  }
}

export async function enqueuePurge(job: PurgeJob): Promise<void> {
  const queueUrl = config().purgeQueueUrl;
  if (!queueUrl) throw new Error('PURGE_QUEUE_URL is not configured');
  sqs ??= new SQSClient({ region: config().region });
  await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(job) }));
}

/** Purges inline while time allows, then hands the rest to the purge worker. */
export async function startPurge(accountId: string, conversationId: string, deadline: number): Promise<void> {
  if ((await purgeMessages(accountId, conversationId, deadline)) === 'done') return;
  logger.info('conversation purge continues asynchronously', { conversation_id: conversationId });
  await enqueuePurge({ kind: 'purge-conversation', accountId, conversationId });
}
