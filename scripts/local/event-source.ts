import { DeleteMessageBatchCommand, ReceiveMessageCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { Worker } from '#shared/routes';
import { invokeSource, type Invoker } from './lambda.ts';

/**
 * What Lambda's SQS event source mapping does, for one worker: long-poll,
 * invoke with a batch, delete what succeeded, and leave failed records to
 * reappear after the visibility timeout (the queue's redrive policy moves
 * them to the dead-letter queue after maxReceiveCount receives).
 */
export function startEventSource(sqs: SQSClient, worker: Worker, queueUrl: string, options: { waitSeconds?: number; run?: Invoker } = {}) {
  let running = true;
  const waitSeconds = options.waitSeconds ?? 1;
  const run = options.run ?? invokeSource;

  // Like the event source mapping, up to maxConcurrency batches are in flight at once.
  const poll = async () => {
    while (running) {
      let messages: Message[];
      try {
        const out = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: queueUrl,
            MaxNumberOfMessages: worker.latencySensitive ? 1 : Math.min(worker.batchSize, 10),
            WaitTimeSeconds: waitSeconds,
            MessageSystemAttributeNames: ['All'],
            // The emulator reads only the older parameter; without it every receive looks like the first.
            AttributeNames: ['All'],
            MessageAttributeNames: ['All'],
          }),
        );
        messages = out.Messages ?? [];
      } catch (error) {
        if (!running) break;
        console.error(`[${worker.name}] receive failed`, (error as Error).message);
        await new Promise((r) => setTimeout(r, 1000));
        continue;
      }
      if (messages.length === 0) continue;

      let failed = new Set<string>(messages.map((m) => m.MessageId!));
      try {
        const result = (await run({ handler: worker.handler }, toEvent(messages, queueUrl), worker.timeoutSeconds)) as
          SQSBatchResponse | undefined;
        failed = new Set((result?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
      } catch (error) {
        // A thrown error fails the whole batch, as on Lambda.
        console.error(`[${worker.name}] invocation failed`, (error as Error).message);
      }
      const done = messages.filter((m) => !failed.has(m.MessageId!));
      if (done.length > 0) {
        await sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
          }),
        );
      }
    }
  };

  const loops = Array.from({ length: worker.maxConcurrency }, poll);
  return {
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

function toEvent(messages: Message[], queueUrl: string): SQSEvent {
  const queueName = queueUrl.split('/').at(-1)!;
  return {
    Records: messages.map((m) => ({
      messageId: m.MessageId!,
      receiptHandle: m.ReceiptHandle!,
      body: m.Body ?? '',
      attributes: {
        ApproximateReceiveCount: m.Attributes?.ApproximateReceiveCount ?? '1',
        SentTimestamp: m.Attributes?.SentTimestamp ?? String(Date.now()),
        SenderId: m.Attributes?.SenderId ?? 'local',
        ApproximateFirstReceiveTimestamp: m.Attributes?.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
      },
      messageAttributes: {},
      md5OfBody: m.MD5OfBody ?? '',
      eventSource: 'aws:sqs',
      eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:${queueName}`,
      awsRegion: 'us-east-1',
    })),
  };
}
