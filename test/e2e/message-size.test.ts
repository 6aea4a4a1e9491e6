import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { elementBytes, MAX_EXTRAS_BYTES } from '#shared/messaging/size';
import { aTenant, type Tenant } from '../steps/given.ts';
import { apiClient, transports, type ApiClient } from '../steps/when.ts';

/** Lambda's limit on a synchronous response; a page must stay well inside it. */
const LAMBDA_RESPONSE_LIMIT = 6 * 1024 * 1024;
const PAGE_BUDGET = 5_100_000;

// The most a message can take in a response: 4,096 characters that JSON escapes
// to \u0001, and reactions by contacts named with quotes, up to the budget.
const maximalText = '\u0001'.repeat(4096);
const contactNamed = (i: number) => '"'.repeat(97) + String(i).padStart(3, '0');
const fitting = Math.floor((MAX_EXTRAS_BYTES - elementBytes({ q: [] })) / elementBytes(contactNamed(0)));
const fill = Array.from({ length: fitting }, (_, i) => contactNamed(i));
// And contacts of plain names taking what is left but 10 to 20 bytes (a name of n plain characters takes n + 5).
for (let k = 0, left = MAX_EXTRAS_BYTES - elementBytes({ q: [] }) - fitting * elementBytes(contactNamed(0)); left > 20; k++) {
  const name = `${k}`.padEnd(Math.min(90, left - 15), 'p');
  fill.push(name);
  left -= elementBytes(name);
}

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

  it('takes a reaction by 1,000 contacts named by their ids, as a group of 1,000 gives it', async () => {
    const sent = await send({ message: 'everyone agrees' });
    const ids = Array.from({ length: 1000 }, (_, i) => `ct_01JD${String(i).padStart(22, '0')}`);
    const res = await update(sent.body.id, { reactions: { thumbsup: ids } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.reactions).toEqual([{ thumbsup: ids }]);
  });

  it('takes 10 attachments with the longest URLs and names a send allows', async () => {
    const form: Record<string, string> = { message: 'ten' };
    for (let i = 0; i < 10; i++) {
      form[`attachments[${i}][type]`] = 'file';
      form[`attachments[${i}][url]`] = `https://files.example.com/${'x'.repeat(2000)}${i}`;
      form[`attachments[${i}][name]`] = `${'n'.repeat(250)}.pdf`;
    }
    const res = await send(form);
    expect(res.status, res.text).toBe(201);
    expect(res.body.attachments).toHaveLength(10);
  });

  it('cuts a page of maximal messages (limit=100) to what one Lambda response holds, and the cursors go on from the cut', async () => {
    // Given 100 messages as large as allowed, after whatever the conversation held
    const created: string[] = [];
    for (let i = 0; i < 100; i += 10) created.push(...(await Promise.all(Array.from({ length: 10 }, maximalMessage))).map((m) => m.id));
    for (const scope of [{ conversation_id: conversationId }, {}] as Record<string, string>[]) {
      // When the newest page of 100 is read
      const first = await api.call('GET', '/v1/messages', { token: t.token, query: { ...scope, limit: 100 } });
      expect(first.status).toBe(200);
      // Then it holds fewer, as many as fit well inside a response, and says more follow
      const bytes = lambdaBytes(first.text);
      expect(bytes).toBeLessThan(PAGE_BUDGET);
      expect(PAGE_BUDGET).toBeLessThan(LAMBDA_RESPONSE_LIMIT);
      expect(bytes).toBeGreaterThan(4_000_000);
      expect(first.body.data.length).toBeLessThan(100);
      expect(first.body.has_more).toBe(true);
      // And paging on with starting_after reads every message once, each page within the budget
      const seen: string[] = first.body.data.map((m: { id: string }) => m.id);
      for (let after = seen.at(-1), more = true; more;) {
        const next = await api.call('GET', '/v1/messages', { token: t.token, query: { ...scope, limit: 100, starting_after: after! } });
        expect(lambdaBytes(next.text)).toBeLessThan(PAGE_BUDGET);
        seen.push(...next.body.data.map((m: { id: string }) => m.id));
        [after, more] = [seen.at(-1), next.body.has_more];
      }
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen).toEqual(expect.arrayContaining(created));
      // And going back with ending_before from the oldest created gives the newer ones nearest it, in order
      const oldest = seen.indexOf([...created].sort()[0]!);
      const back = await api.call('GET', '/v1/messages', { token: t.token, query: { ...scope, limit: 100, ending_before: seen[oldest]! } });
      expect(lambdaBytes(back.text)).toBeLessThan(PAGE_BUDGET);
      expect(back.body.has_more).toBe(true);
      expect(back.body.data.map((m: { id: string }) => m.id)).toEqual(seen.slice(oldest - back.body.data.length, oldest));
    }
  }, 240_000);
});
