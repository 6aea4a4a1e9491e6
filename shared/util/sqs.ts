import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { config } from '#shared/config';

let client: SQSClient | undefined;
const sqs = () => (client ??= new SQSClient({ region: config().region }));

/** The process's one SQS client (the tests count the calls it makes). */
export const sqsClient = (): SQSClient => sqs();

export function requireQueue(url: string | undefined, name: string): string {
  if (!url) throw new Error(`${name} is not configured`);
  return url;
}

export async function sendJson(queueUrl: string, body: unknown): Promise<void> {
  await sqs().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(body) }));
}

/** SendMessageBatch, ten at a time; throws if any entry failed so the caller keeps its outbox. */
export async function sendJsonBatch(queueUrl: string, bodies: unknown[]): Promise<void> {
  for (let i = 0; i < bodies.length; i += 10) {
    const entries = bodies.slice(i, i + 10).map((body, j) => ({ Id: String(j), MessageBody: JSON.stringify(body) }));
    const out = await sqs().send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
    if (out.Failed?.length) throw new Error(`SendMessageBatch failed for ${out.Failed.length} entries`);
  }
}
