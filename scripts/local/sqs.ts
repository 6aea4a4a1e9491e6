import { createSqsServer } from 'local-aws-sqs';
import { freePort } from './ports.ts';
import type { RunningService } from './dynamodb.ts';

/** An in-process SQS emulator speaking the AWS JSON protocol the SDK uses. */
export async function startSqsEmulator(options: { port?: number } = {}): Promise<RunningService> {
  const port = options.port ?? (await freePort());
  const server = await createSqsServer({
    port,
    hostname: '127.0.0.1',
    emulateQueueCreationLifecycle: false,
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
