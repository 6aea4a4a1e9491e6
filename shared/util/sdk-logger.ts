import type { Logger } from '@smithy/types';

/**
 * The SDK's logger, without `info`. The SDK logs nothing here either way
 * (its default logger drops every line), but its logging middleware builds
 * each call's input and output filtered for sensitive fields before handing
 * them to `logger.info`, unless the logger has no `info` (it calls
 * `logger?.info?.(…)`): a CPU profile of the local server put that filtering
 * at 3% of a page request's time. The DynamoDB, SQS and API Gateway
 * management clients take it; errors still reach `error`, a no-op. (Not the
 * KMS client of the sealing chunk, loaded on first use: a module it shared
 * with the entry would be split into a chunk read at every init.)
 */
export const sdkLogger = { debug: () => {}, warn: () => {}, error: () => {} } as unknown as Logger;
