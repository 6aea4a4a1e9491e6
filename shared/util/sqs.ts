import type { SQSClient } from '@aws-sdk/client-sqs';
import { config } from '#shared/config';
import { sdkLogger } from '#shared/util/sdk-logger';

/**
 * The SQS client is imported by the first send, not with the bundle. Most
 * requests of the functions that can send never do: a delete queues a purge
 * only when it runs out of time, `POST /emails` queues only what it could not
 * validate inline, the sweeper and the purge worker only what they find
 * unfinished. The client is about a tenth of a cold import
 * (docs/performance.md, "Cold start"). A failed import fails every later
 * send too, as Node remembers a failed module load.
 */
let loaded: Promise<{ client: SQSClient; module: typeof import('@aws-sdk/client-sqs') }> | undefined;

/**
 * The SDK module and the process's one client, loaded once: Node imports a
 * module once, but each `import()` still goes through the loader's
 * resolution, which a CPU profile of the local server put at 4% of a
 * request's time when every invocation asked for the client.
 */
const sqs = () =>
  (loaded ??= import('@aws-sdk/client-sqs').then((module) => ({
    module,
    client: new module.SQSClient({ region: config().region, logger: sdkLogger }),
  })));

/** The process's one SQS client (the tests count the calls it makes). */
export const sqsClient = async (): Promise<SQSClient> => (await sqs()).client;

export function requireQueue(url: string | undefined, name: string): string {
  if (!url) throw new Error(`${name} is not configured`);
  return url;
}

/** SendMessage of `body` as JSON; `delaySeconds`: 0 to 900. */
export async function sendJson(queueUrl: string, body: unknown, delaySeconds?: number): Promise<void> {
  const { client, module } = await sqs();
  const delay = delaySeconds === undefined ? {} : { DelaySeconds: delaySeconds };
  await client.send(new module.SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(body), ...delay }));
}

/**
 * What one SendMessageBatch may carry in all: SQS's 256 KiB (AWS raised it to 1 MiB in 2025; emulators may not have).
 * Webhook deliveries carry their event, up to about 100 KB with a message's reactions and attachments.
 */
const BATCH_MAX_BYTES = 256 * 1024;

/** Bodies in batches of at most ten and BATCH_MAX_BYTES (a body larger alone goes alone, for SQS to judge). */
export function batchesOf(texts: string[]): string[][] {
  const batches: string[][] = [];
  let batch: string[] = [];
  let bytes = 0;
  for (const text of texts) {
    const size = Buffer.byteLength(text);
    if (batch.length === 10 || (batch.length > 0 && bytes + size > BATCH_MAX_BYTES)) {
      batches.push(batch);
      [batch, bytes] = [[], 0];
    }
    batch.push(text);
    bytes += size;
  }
  if (batch.length) batches.push(batch);
  return batches;
}

/** SendMessageBatch, ten at a time; throws if any entry failed so the caller keeps its outbox. `delaySeconds`: 0 to 900. */
export async function sendJsonBatch(queueUrl: string, bodies: unknown[], delaySeconds?: number): Promise<void> {
  const { client, module } = await sqs();
  for (const batch of batchesOf(bodies.map((body) => JSON.stringify(body)))) {
    const entries = batch.map((text, j) => ({ Id: String(j), MessageBody: text, ...(delaySeconds ? { DelaySeconds: delaySeconds } : {}) }));
    const out = await client.send(new module.SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
    if (out.Failed?.length) throw new Error(`SendMessageBatch failed for ${out.Failed.length} entries`);
  }
}
