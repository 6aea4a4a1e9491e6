import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { elementBytes, MAX_EXTRAS_BYTES } from '#shared/messaging/size';
import { aTenant, type Tenant } from '../steps/given.ts';
import { apiClient, transports, type ApiClient } from '../steps/when.ts';

/** Lambda's limit on a synchronous response; a page must stay well inside it. */
const LAMBDA_RESPONSE_LIMIT = 6 * 1024 * 1024;
const PAGE_BUDGET = 5_000_000;

// The most a message can take in a response: 4,096 characters that JSON escapes
// to \u0001, and reactions by contacts named with quotes, up to the budget.
const maximalText = '\u0001'.repeat(4096);
const contactNamed = (i: number) => '"'.repeat(97) + String(i).padStart(3, '0');
const fitting = Math.floor((MAX_EXTRAS_BYTES - elementBytes({ q: [] })) / elementBytes(contactNamed(0)));
const fill = Array.from({ length: fitting }, (_, i) => contactNamed(i));

/** What a JSON body of this text costs inside Lambda's response, where it is itself a JSON string. */
const lambdaBytes = (text: string) => Buffer.byteLength(JSON.stringify(text));

describe.each(transports())('message size bound over %s', (transport) => {
  let api: ApiClient;
  let t: Tenant;
  let conversationId: string;

  beforeAll(async () => {
    api = await apiClient('messaging', transport);
    t = await aTenant();
    conversationId = (await api.call('POST', '/v1/conversations', { token: t.token, form: { contact_id: t.contactIds.bob! } })).body.id;
  });
  afterAll(() => api.close());

  const send = (form: Record<string, string>) =>
    api.call('POST', '/v1/messages', { token: t.token, form: { conversation_id: conversationId, ...form } });
  const update = (id: string, json: unknown) => api.call('PUT', `/v1/messages/${id}`, { token: t.token, json });
  const attachment = (path: string) => ({ type: 'file', url: `https://files.example.com/${path}` });

  async function maximalMessage() {
    const sent = await send({ message: maximalText });
    expect(sent.status).toBe(201);
    const full = await update(sent.body.id, { reactions: { q: fill } });
    expect(full.status).toBe(200);
    return full.body;
  }

  it('refuses reactions or attachments past the budget with 400 message_too_large, and a removal makes room', async () => {
    const msg = await maximalMessage();
    const more = await update(msg.id, { reactions: { q: [contactNamed(999)] } });
    expect(more.status).toBe(400);
    expect(more.body.error).toMatchObject({ code: 'message_too_large', param: 'reactions' });
    const file = await update(msg.id, { attachments: [attachment('report.pdf')] });
    expect(file.status).toBe(400);
    expect(file.body.error).toMatchObject({ code: 'message_too_large', param: 'attachments' });
    expect((await update(msg.id, { reactions: { q: '' } })).status).toBe(200);
    expect((await update(msg.id, { attachments: [attachment('report.pdf')] })).status).toBe(200);
  });

  it('refuses a send whose attachments pass the budget', async () => {
    const form: Record<string, string> = { message: 'heavy' };
    for (let i = 0; i < 10; i++) {
      form[`attachments[${i}][type]`] = 'file';
      form[`attachments[${i}][url]`] = `https://files.example.com/${'x'.repeat(2000)}${i}`;
    }
    const res = await send(form);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'message_too_large', param: 'attachments' });
  });

  it('fits a full page (limit=100) of maximal messages well inside a Lambda response', async () => {
    for (let i = 0; i < 100; i += 10) await Promise.all(Array.from({ length: 10 }, maximalMessage));
    const queries: Record<string, string | number>[] = [{ conversation_id: conversationId, limit: 100 }, { limit: 100 }];
    for (const query of queries) {
      const page = await api.call('GET', '/v1/messages', { token: t.token, query });
      expect(page.status).toBe(200);
      expect(page.body.data).toHaveLength(100);
      const bytes = lambdaBytes(page.text);
      expect(bytes).toBeLessThan(PAGE_BUDGET);
      expect(PAGE_BUDGET).toBeLessThan(LAMBDA_RESPONSE_LIMIT);
      // The messages are as large as allowed: the bound, not small data, keeps the page small.
      expect(bytes).toBeGreaterThan(4_000_000);
    }
  }, 120_000);
});
