import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { eventually } from './eventually.ts';

const COUNTS = ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'] as const;

/**
 * Waits until each of these queues holds no message: none waiting, none
 * being handled, none delayed. The sentinel of a queue's workers: every
 * message sent before the call has been handled to the end (its handler
 * returned and the message was deleted, or it went on to a dead-letter
 * queue, which `urls` should then name too), so whatever its handling would
 * have done is done, and a test may look for what must not have happened.
 * The SQS emulator's counts are exact (SQS's own are approximate).
 */
export async function queuesSettled(urls: string[], what = 'the queues hold no message'): Promise<void> {
  const sqs = new SQSClient({});
  try {
    await eventually(
      async () => {
        for (const url of urls) {
          const { Attributes: counts = {} } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: [...COUNTS] }));
          const held = COUNTS.filter((name) => counts[name] !== '0').map((name) => `${name} ${counts[name]}`);
          if (held.length > 0) throw new Error(`${url.split('/').at(-1)}: ${held.join(', ')}`);
        }
        return true;
      },
      { what },
    );
  } finally {
    sqs.destroy();
  }
}

/** The validation workers' sentinel: this file's validation queue and its dead-letter queue (see emailEnv) hold nothing. */
export const validationSettled = () =>
  queuesSettled([process.env.VALIDATION_QUEUE_URL!, process.env.VALIDATION_DLQ_URL!], 'every validation message handled');
