import type { Context } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { logger, withInvocationLogger } from '#shared/util/logger';
import { captureLogs, type CapturedLogs } from '../steps/logs.ts';

const contextOf = (awsRequestId: string) =>
  ({ awsRequestId, functionName: 'fn', functionVersion: '1', invokedFunctionArn: 'arn:fn', memoryLimitInMB: '256' }) as Context;

let logs: CapturedLogs | undefined;
afterEach(() => logs?.stop());

describe('invocation loggers', () => {
  it("keeps a line logged after its invocation ended on that invocation's id and keys, while the next reuses its logger", async () => {
    // Given logs captured, and invocation A, which leaves work running that logs once released
    logs = captureLogs('info');
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let late!: Promise<void>;
    await withInvocationLogger(contextOf('req-a'), async () => {
      logger.withContext({ account_id: 'acct-a' });
      logger.info('a');
      late = released.then(() => logger.info('late'));
    });
    // When invocation B runs, and A's work logs in the middle of it
    await withInvocationLogger(contextOf('req-b'), async () => {
      logger.withContext({ account_id: 'acct-b' });
      release();
      await late;
      logger.info('b');
    });
    // Then each line carries its own invocation's id and keys
    const byMessage = Object.fromEntries(logs.lines().map((line) => [line.message, line]));
    expect(byMessage.a).toMatchObject({ function_request_id: 'req-a', account_id: 'acct-a' });
    expect(byMessage.late).toMatchObject({ function_request_id: 'req-a', account_id: 'acct-a' });
    expect(byMessage.b).toMatchObject({ function_request_id: 'req-b', account_id: 'acct-b' });
  });
});
