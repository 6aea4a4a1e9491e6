import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aTenant, type Tenant } from '../steps/given.ts';
import { emailEnv, type EmailEnv } from '../steps/email-env.ts';
import { captureLogs } from '../steps/logs.ts';
import { apiClient, transports, type ApiClient, type ApiResponse } from '../steps/when.ts';

/**
 * Requests served at once by one process (the local server, or a Lambda
 * running invocations concurrently) must not mix up their log lines: every
 * line a request writes carries its own X-Request-Id, and only its own.
 */
describe.runIf(transports('messaging').includes('http'))('request ids in the logs of interleaved requests', () => {
  let messaging: ApiClient;
  let email: ApiClient;
  let t: Tenant;
  let env: EmailEnv | undefined;

  beforeAll(async () => {
    env = await emailEnv(undefined, { workers: false });
    [messaging, email] = await Promise.all([apiClient('messaging', 'http'), apiClient('email', 'http')]);
    t = await aTenant();
  });
  afterAll(async () => {
    await Promise.all([messaging?.close(), email?.close()]);
    await env?.stop();
  });

  it('puts each response X-Request-Id on every line its request wrote, and on no other', async () => {
    const conversation = (await messaging.call('POST', '/v1/conversations', { token: t.token, form: { contact_id: t.contactIds.bob! } }))
      .body;
    // DNS of broken.test keeps failing: those requests also log a warning from deep inside the validation.
    const failing = ['someone@broken.test', 'other.person@broken.test'];

    const logs = captureLogs();
    let responses: { response: ApiResponse; path: string; method: string }[];
    try {
      const calls = [
        ...Array.from({ length: 6 }, (_, i) => ({
          method: 'POST',
          path: '/v1/messages',
          send: () =>
            messaging.call('POST', '/v1/messages', { token: t.token, form: { conversation_id: conversation.id, message: `hello ${i}` } }),
        })),
        ...Array.from({ length: 6 }, () => ({
          method: 'GET',
          path: '/api/v1/emailLists',
          send: () => email.call('GET', '/api/v1/emailLists', { token: t.token }),
        })),
        {
          method: 'POST',
          path: '/api/v1/emails',
          send: () => email.call('POST', '/api/v1/emails', { token: t.token, json: { emails: failing } }),
        },
        { method: 'GET', path: '/v1/nowhere', send: () => messaging.call('GET', '/v1/nowhere', { token: t.token }) },
      ];
      responses = await Promise.all(calls.map(async (c) => ({ ...c, response: await c.send() })));
    } finally {
      logs.stop();
    }

    // Real work, not early refusals: the messages were stored, the lists read, the emails accepted.
    expect(responses.map((r) => r.response.status)).toEqual([...Array(6).fill(201), ...Array(6).fill(200), 201, 404]);

    const lines = logs.lines();
    for (const line of lines) expect(line.request_id, `a line without a request id: ${JSON.stringify(line)}`).toEqual(expect.any(String));
    const byRequest = Map.groupBy(lines, (line) => line.request_id);
    const ids = responses.map((r) => r.response.headers['x-request-id']!);
    expect(new Set(ids).size).toBe(responses.length);
    // No line carries an id that no response was given.
    expect([...byRequest.keys()].sort()).toEqual([...ids].sort());

    for (const { response, method, path } of responses) {
      const own = byRequest.get(response.headers['x-request-id']!)!;
      expect(own).toContainEqual(expect.objectContaining({ message: 'request completed', status: response.status }));
      for (const line of own) {
        expect(line).toMatchObject({ method, path, service: expect.any(String), timestamp: expect.any(String) });
        // One invocation per request here: its Lambda context is on each of its lines.
        expect(line.function_request_id).toBe(own[0]!.function_request_id);
        if (response.status !== 404) expect(line.account_id).toBe(t.accountId);
      }
    }
    const emailsRequest = responses.find((r) => r.path === '/api/v1/emails')!;
    const warnings = byRequest.get(emailsRequest.response.headers['x-request-id']!)!.filter((l) => l.level === 'WARN');
    expect(warnings.map((w) => w.email_id).sort()).toEqual(emailsRequest.response.body.emails.map((e: { id: number }) => e.id).sort());

    // Never a token or a whole address, anywhere in what was written.
    const written = JSON.stringify(lines) + logs.other().join('\n');
    expect(written).not.toContain(t.token);
    for (const address of failing) expect(written).not.toContain(address);
  });
});
