import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { addCredits } from '#shared/data/accounts';
import { clearValidatorCache } from '#shared/email/validator/index';
import { instrumented } from '#shared/util/invocation';
import { countMetric, METRICS_NAMESPACE, recordMetric } from '#shared/util/metrics';
import { aTenant, type Tenant } from '../steps/given.ts';
import { emailEnv, type EmailEnv } from '../steps/email-env.ts';
import { eventually } from '../steps/eventually.ts';
import { validationSettled } from '../steps/queues.ts';
import { captureLogs, type CapturedLogs, type LogLine } from '../steps/logs.ts';
import { apiClient, type ApiClient } from '../steps/when.ts';

/**
 * The functions' Embedded Metric Format lines, read from stdout as
 * CloudWatch would read them. They are printed only on Lambda, so these
 * tests set the variable the Lambda runtime sets.
 */
const emf = (lines: LogLine[]) => lines.filter((line) => line._aws?.CloudWatchMetrics);

/** Metric name -> values summed over all EMF lines. */
function totals(lines: LogLine[]): Record<string, number> {
  const sums: Record<string, number> = {};
  for (const line of emf(lines)) {
    for (const { Name } of line._aws.CloudWatchMetrics[0].Metrics as { Name: string }[]) {
      const value = line[Name] as number | number[];
      sums[Name] = (sums[Name] ?? 0) + (Array.isArray(value) ? value.reduce((a, b) => a + b, 0) : value);
    }
  }
  return sums;
}

let logs: CapturedLogs | undefined;
const onLambda = () => {
  process.env.AWS_LAMBDA_FUNCTION_NAME = 'metrics-test';
  logs = captureLogs('silent');
  return logs;
};
afterEach(() => {
  delete process.env.AWS_LAMBDA_FUNCTION_NAME;
  logs?.stop();
  logs = undefined;
});

describe('metric publication', () => {
  it('prints one EMF line per invocation on Lambda, counts summed', async () => {
    const capture = onLambda();
    const handler = instrumented(async () => {
      countMetric('messagesSent');
      countMetric('messagesSent', 2);
      recordMetric('listCompletionTime', 12);
      recordMetric('listCompletionTime', 30);
    });
    await handler();
    const [line, ...more] = emf(capture.lines());
    expect(more).toEqual([]);
    expect(line!._aws.CloudWatchMetrics[0]).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      Dimensions: [['service']],
      Metrics: expect.arrayContaining([
        { Name: 'MessagesSent', Unit: 'Count' },
        { Name: 'ListCompletionTime', Unit: 'Seconds' },
      ]),
    });
    expect(line).toMatchObject({ MessagesSent: 3, ListCompletionTime: [12, 30] });
  });

  it('prints metrics of a failed invocation too, and nothing for an invocation without any', async () => {
    const capture = onLambda();
    await expect(instrumented(async () => (countMetric('emailsErrored'), Promise.reject(new Error('boom'))))()).rejects.toThrow('boom');
    await instrumented(async () => undefined)();
    expect(emf(capture.lines()).map((line) => line.EmailsValidatedError)).toEqual([1]);
  });

  it('prints nothing off Lambda (local server, tests)', async () => {
    const capture = captureLogs('silent');
    logs = capture;
    await instrumented(async () => countMetric('messagesSent'))();
    expect(capture.lines()).toEqual([]);
    expect(capture.other()).toEqual([]);
  });
});

describe('business metrics', () => {
  let env: EmailEnv | undefined;
  let messaging: ApiClient;
  let email: ApiClient;
  let t: Tenant;

  beforeAll(async () => {
    env = await emailEnv();
    [messaging, email] = await Promise.all([apiClient('messaging', 'handler'), apiClient('email', 'handler')]);
    t = await aTenant();
  });
  afterAll(async () => {
    await env?.stop();
  });
  beforeEach(() => clearValidatorCache());

  it('counts messages sent', async () => {
    const conversation = (await messaging.call('POST', '/v1/conversations', { token: t.token, form: { contact_id: t.contactIds.bob! } }))
      .body;
    const capture = onLambda();
    await messaging.call('POST', '/v1/messages', { token: t.token, form: { conversation_id: conversation.id, message: 'hi' } });
    await messaging.call('POST', '/v1/messages', {
      token: t.token,
      form: { conversation_id: 'conv_01JD0000000000000000000000', message: 'lost' },
    });
    expect(totals(capture.lines())).toMatchObject({ MessagesSent: 1 });
  });

  it('counts validations by outcome and the DNS cache hits and misses', async () => {
    const capture = onLambda();
    const addresses = ['a@example.com', 'b@example.com', 'c@nowhere.test', 'd@broken.test'];
    const res = await email.call('POST', '/api/v1/emails', { token: t.token, json: { emails: addresses } });
    expect(res.status).toBe(201);
    // Two domains answered by DNS once each, broken.test asked (and failing) once; the second example.com address shares the first lookup.
    expect(totals(capture.lines())).toMatchObject({
      EmailsValidatedValid: 2,
      EmailsValidatedInvalid: 1,
      EmailValidationRetries: 1,
      DnsCacheHits: 1,
      DnsCacheMisses: 3,
    });
  });

  it('counts credits held, and times a list from its first add to its last email finished', async () => {
    const tenant = await aTenant();
    await addCredits(tenant.accountId, 1);
    const list = (await email.call('POST', '/api/v1/emailList', { token: tenant.token, json: { name: 'timed' } })).body;
    const capture = onLambda();
    await email.call('POST', `/api/v1/emailList/${list.id}/emails`, {
      token: tenant.token,
      json: { emails: ['x@example.com', 'y@example.com'] },
    });
    expect(totals(capture.lines())).toMatchObject({ CreditsHeld: 2 });

    await addCredits(tenant.accountId, 5);
    const { resumeAwaiting } = await import('#shared/email/outbox');
    await resumeAwaiting(tenant.accountId);
    // The worker runs in this process through the local event source; it finishes the list once.
    const timed = await eventually(async () => emf(capture.lines()).find((line) => line.ListCompletionTime !== undefined), {
      what: 'a ListCompletionTime line',
    });
    expect(timed.ListCompletionTime).toBeGreaterThanOrEqual(0); // one value: printed as a number, not a list
    // And once every validation message is handled (each invocation prints its line before its message is deleted), no other says so
    await validationSettled();
    expect(emf(capture.lines()).filter((line) => line.ListCompletionTime !== undefined)).toHaveLength(1);
  });
});
