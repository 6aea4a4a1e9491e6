import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, type ServiceInputTypes, type ServiceOutputTypes } from '@aws-sdk/lib-dynamodb';
import type { InitializeMiddleware } from '@smithy/types';
import { sdkLogger } from '#shared/util/sdk-logger';
import { config } from '#shared/config';

let client: DynamoDBDocumentClient | undefined;

/** An `initialize` step middleware: it sees each command by name, before it is sent and once it is answered. */
type Middleware = InitializeMiddleware<ServiceInputTypes, ServiceOutputTypes>;
/** Middleware this process adds to its client, kept across `resetDb` (deployed, none). */
const extensions = new Map<string, Middleware>();

/**
 * One document client per container. The endpoint comes from the SDK's own
 * AWS_ENDPOINT_URL_DYNAMODB variable, so DynamoDB Local needs no code path.
 */
export function db(): DynamoDBDocumentClient {
  if (!client) {
    client = DynamoDBDocumentClient.from(new DynamoDBClient({ region: config().region, logger: sdkLogger }), {
      marshallOptions: { removeUndefinedValues: true },
    });
    for (const [name, middleware] of extensions) client.middlewareStack.add(middleware, { step: 'initialize', name });
  }
  return client;
}

/**
 * Runs `middleware` on every call of this process's client, this one and
 * any made after a reset, until the returned function is called: the local
 * runtime wakes its stream pollers after each write (scripts/local/runtime.ts).
 */
export function extendDb(name: string, middleware: Middleware): () => void {
  extensions.set(name, middleware);
  client?.middlewareStack.add(middleware, { step: 'initialize', name });
  return () => {
    extensions.delete(name);
    client?.middlewareStack.remove(name);
  };
}

export const tableName = () => config().tableName;

export function resetDb(): void {
  client = undefined;
}
