import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { recoverLostWork } from '#shared/email/outbox';
import { aTenant, type Tenant } from '../steps/given.ts';
import { emailEnv, type EmailEnv } from '../steps/email-env.ts';
import { throughFaultProxy, touches, type FaultProxy, type FaultRule, type SeenRequest } from '../steps/fault-proxy.ts';
import { apiClient, type ApiClient, type ApiResponse } from '../steps/when.ts';

/**
 * The creates under DynamoDB faults (a proxy in front of DynamoDB Local):
 * a retry with the same Idempotency-Key after any failure gets what a clean
 * first try would have answered, and the effect is stored once. Only HTTP
 * is used, so the cases hold whatever the domain code looks like inside.
 */
const deployed = Boolean(process.env.MESSAGING_BASE_URL || process.env.EMAIL_BASE_URL);

describe.skipIf(deployed)('idempotent creates under DynamoDB faults', () => {
  let messaging: ApiClient;
  let email: ApiClient;
  let env: EmailEnv | undefined;
  let proxy: FaultProxy;
  let restore: () => Promise<void>;
  let t: Tenant;

  beforeAll(async () => {
    env = await emailEnv(undefined, { workers: false });
    messaging = await apiClient('messaging', 'handler');
    email = await apiClient('email', 'handler');
    t = await aTenant();
    ({ proxy, restore } = await throughFaultProxy());
  });
  afterEach(() => {
    proxy.clear();
    proxy.hits.clear();
  });
  afterAll(async () => {
    await restore?.();
    await env?.stop();
  });

  let keys = 0;
  const newKey = () => `key-${Date.now()}-${keys++}`;

  /** A client that retries with the same key on a 5xx or a 409, as a client of an idempotent API does. */
  async function untilAnswered(send: () => Promise<ApiResponse>, tries = 15): Promise<{ final: ApiResponse; all: ApiResponse[] }> {
    const all: ApiResponse[] = [];
    for (let i = 0; i < tries; i++) {
      let res: ApiResponse | undefined;
      try {
        res = await send();
      } catch {
        res = undefined;
      }
      if (res) all.push(res);
      if (res && res.status < 500 && res.status !== 409) return { final: res, all };
      await new Promise((r) => setTimeout(r, 50 + Math.random() * 150));
    }
    throw new Error(`no answer after ${tries} tries: ${all.map((r) => r.status).join(', ')}`);
  }

  const openConversation = async (tenant = t) =>
    (await messaging.call('POST', '/v1/conversations', { token: tenant.token, form: { contact_id: tenant.contactIds.bob! } })).body
      .id as string;
  const sendMessage = (conversationId: string, text: string, key: string, tenant = t) =>
    messaging.call('POST', '/v1/messages', {
      token: tenant.token,
      form: { conversation_id: conversationId, message: text },
      headers: { 'Idempotency-Key': key },
    });
  const messagesOf = async (conversationId: string, tenant = t) => {
    const all: { id: string; message: string }[] = [];
    let after: string | undefined;
    for (;;) {
      const res = await messaging.call('GET', '/v1/messages', {
        token: tenant.token,
        query: { conversation_id: conversationId, limit: 100, ...(after ? { starting_after: after } : {}) },
      });
      expect(res.status).toBe(200);
      all.push(...res.body.data);
      if (!res.body.has_more) return all;
      after = all.at(-1)!.id;
    }
  };
  const createEmails = (emails: unknown[], key: string, tenant = t) =>
    email.call('POST', '/api/v1/emails', { token: tenant.token, json: { emails }, headers: { 'Idempotency-Key': key } });
  const newList = async (tenant = t) =>
    (await email.call('POST', '/api/v1/emailList', { token: tenant.token, json: { name: 'faults' } })).body.id as number;
  const addToList = (listId: number, emails: unknown[], key: string, tenant = t) =>
    email.call('POST', `/api/v1/emailList/${listId}/emails`, {
      token: tenant.token,
      json: { emails },
      headers: { 'Idempotency-Key': key },
    });
  const getList = async (listId: number, tenant = t) =>
    (await email.call('GET', `/api/v1/emailList/${listId}`, { token: tenant.token })).body;
  const standaloneEmails = async (tenant: Tenant) => {
    const all: { id: number; email: string }[] = [];
    for (let page = 1; ; page++) {
      const res = await email.call('GET', '/api/v1/emails', { token: tenant.token, query: { page } });
      expect(res.status).toBe(200);
      all.push(...res.body.emails);
      if (page >= res.body.totalPages) return all;
    }
  };
  /** The counts an add's own work puts on a list are applied after its answer when settling failed: settle what is left. */
  const settleLeftovers = () => recoverLostWork({ strandedAfterMs: 0, dueBeforeMs: 0, deadline: Date.now() + 20_000 });

  const isRecord = (s: SeenRequest) => touches(s, '#IDEM#');
  const faults: Record<string, (work: string) => FaultRule> = {
    "the work's transaction is carried out and every answer to it lost": (work) => ({
      operation: 'TransactWriteItems',
      match: (s) => touches(s, work),
      fault: 'lose-reply',
    }),
    'the answer cannot be recorded': () => ({
      operation: 'UpdateItem',
      match: (s) => isRecord(s) && touches(s, '"response"'),
      fault: 'error',
    }),
    'the claim is carried out and its answer lost': () => ({ operation: 'PutItem', match: isRecord, fault: 'lose-reply', times: 1 }),
  };

  describe.each(Object.keys(faults))('POST /v1/messages when %s', (fault) => {
    it('stores one message and answers the retry as a clean first try', async () => {
      // Given a conversation of a fresh account
      const tenant = await aTenant();
      const conversationId = await openConversation(tenant);
      const key = newKey();
      const send = () => sendMessage(conversationId, `hello ${key}`, key, tenant);
      // When the send meets the fault, and the client retries with the same key until it has an answer
      proxy.inject(faults[fault]!('#MSG#'));
      const first = await send().catch(() => undefined);
      expect(proxy.hits.size, 'the fault was met').toBeGreaterThan(0);
      proxy.clear();
      const { final, all } = await untilAnswered(send);
      // Then no answer was a 4xx, and the final answer is the created message
      expect([first, ...all].filter((r) => r && r.status >= 400 && r.status < 500)).toEqual([]);
      expect(final.status).toBe(201);
      expect(final.body).toMatchObject({ message: `hello ${key}`, conversation_id: conversationId });
      if (first && first.status === 201) expect(final.body).toEqual(first.body);
      // And exactly one message is stored, the one answered
      const stored = await messagesOf(conversationId, tenant);
      expect(stored.map((m) => m.id)).toEqual([final.body.id]);
      // And a further retry replays it
      const again = await send();
      expect(again.status).toBe(201);
      expect(again.body).toEqual(final.body);
    });
  });

  it('answers the first try when the claim reply was lost, not 409', async () => {
    const conversationId = await openConversation();
    proxy.inject(faults['the claim is carried out and its answer lost']!(''));
    const res = await sendMessage(conversationId, 'claimed once', newKey());
    expect(proxy.hits.get('PutItem:lose-reply')).toBeGreaterThan(0);
    expect(res.status).toBe(201);
  });

  it('lets the retry in at once when every answer to the claim was lost, instead of 409 until the lease ends', async () => {
    // Given a conversation, and a key whose claim is carried out but no answer to it arrives: the first attempt's is lost,
    // the SDK's further attempts are refused
    const conversationId = await openConversation();
    const key = newKey();
    proxy.inject({ operation: 'PutItem', match: isRecord, fault: 'lose-reply', times: 1 });
    proxy.inject({ operation: 'PutItem', match: isRecord, fault: 'error' });
    const first = await sendMessage(conversationId, 'claimed, unanswered', key);
    proxy.clear();
    // When the first try has failed, and the client retries with the same key
    expect(first.status).toBe(500);
    const retry = await sendMessage(conversationId, 'claimed, unanswered', key);
    // Then the retry is served at once (the claim was left interrupted, not in progress), and one message is stored
    expect(retry.status).toBe(201);
    const again = await sendMessage(conversationId, 'claimed, unanswered', key);
    expect(again.body).toEqual(retry.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
  });

  describe.each(Object.keys(faults))('POST /api/v1/emails when %s', (fault) => {
    it('stores each address once and answers the retry as a clean first try', async () => {
      // Given a fresh account
      const tenant = await aTenant();
      const key = newKey();
      const batch = ['one@example.com', 'two@gmail.com', 'not an address', 'one@example.com'];
      // When the create meets the fault, and the client retries with the same key
      proxy.inject(faults[fault]!('#OUTBOX#'));
      const first = await createEmails(batch, key, tenant).catch(() => undefined);
      expect(proxy.hits.size, 'the fault was met').toBeGreaterThan(0);
      proxy.clear();
      const { final, all } = await untilAnswered(() => createEmails(batch, key, tenant));
      // Then no 4xx, and the answer has the three stored emails in place and the bad entry
      expect([first, ...all].filter((r) => r && r.status >= 400 && r.status < 500)).toEqual([]);
      expect(final.status).toBe(201);
      const entries = final.body.emails as { id?: number; email: string; error?: string }[];
      expect(entries.map((e) => e.email)).toEqual(batch);
      expect(entries.map((e) => typeof e.id === 'number')).toEqual([true, true, false, true]);
      if (first && first.status === 201) expect(entries.map((e) => e.id)).toEqual(first.body.emails.map((e: { id?: number }) => e.id));
      // And exactly those three are stored, also once the sweeper has finished whatever a crash left
      await settleLeftovers();
      const stored = await standaloneEmails(tenant);
      expect(stored.map((e) => e.id).sort()).toEqual(entries.flatMap((e) => (e.id === undefined ? [] : [e.id])).sort());
    });
  });

  describe.each(Object.keys(faults))('POST /api/v1/emailList when %s', (fault) => {
    it('creates one list and answers the retry with it', async () => {
      // Given a fresh account
      const tenant = await aTenant();
      const key = newKey();
      const create = () =>
        email.call('POST', '/api/v1/emailList', { token: tenant.token, json: { name: 'once' }, headers: { 'Idempotency-Key': key } });
      // When the create meets the fault, and the client retries with the same key until it has an answer
      proxy.inject(faults[fault]!('LISTID#'));
      const first = await create().catch(() => undefined);
      expect(proxy.hits.size, 'the fault was met').toBeGreaterThan(0);
      proxy.clear();
      const { final, all } = await untilAnswered(create);
      // Then no 4xx, and the account holds exactly the one list answered
      expect([first, ...all].filter((r) => r && r.status >= 400 && r.status < 500)).toEqual([]);
      expect(final.status).toBe(201);
      const lists = await email.call('GET', '/api/v1/emailLists', { token: tenant.token });
      expect(lists.body.emailLists.map((l: { id: number }) => l.id)).toEqual([final.body.id]);
    });
  });

  it('creates one list when the answer to its transaction was lost and the SDK sent it again', async () => {
    // Given a fresh account
    const tenant = await aTenant();
    // When the create's transaction is carried out but its first answer is lost (the SDK retries it)
    proxy.inject({ operation: 'TransactWriteItems', match: (s) => touches(s, 'LISTID#'), fault: 'lose-reply', times: 1 });
    const res = await email.call('POST', '/api/v1/emailList', { token: tenant.token, json: { name: 'lost answer' } });
    expect(proxy.hits.size, 'the fault was met').toBeGreaterThan(0);
    // Then it answers 201, and the account holds exactly the list answered
    expect(res.status).toBe(201);
    const lists = await email.call('GET', '/api/v1/emailLists', { token: tenant.token });
    expect(lists.body.emailLists.map((l: { id: number }) => l.id)).toEqual([res.body.id]);
  });

  describe.each(Object.keys(faults))('POST /api/v1/emailList/{id}/emails when %s', (fault) => {
    it('accepts its own addresses once, counts exactly, and answers the retry as a clean first try', async () => {
      // Given a list that already holds one address
      const tenant = await aTenant();
      const listId = await newList(tenant);
      expect((await addToList(listId, ['old@example.com'], newKey(), tenant)).status).toBe(201);
      const key = newKey();
      const fresh = Array.from({ length: 10 }, (_, i) => `new${i}@example.com`);
      const batch = [...fresh, 'old@example.com', 'nope'];
      // When the add meets the fault, and the client retries with the same key
      proxy.inject(faults[fault]!('#OUTBOX#'));
      const first = await addToList(listId, batch, key, tenant).catch(() => undefined);
      expect(proxy.hits.size, 'the fault was met').toBeGreaterThan(0);
      proxy.clear();
      const { final, all } = await untilAnswered(() => addToList(listId, batch, key, tenant));
      // Then no 4xx; the ten new addresses are accepted, the old one is a duplicate, the bad one rejected
      expect([first, ...all].filter((r) => r && r.status >= 400 && r.status < 500)).toEqual([]);
      expect(final.status).toBe(201);
      const entries = final.body.emails as { id?: number; email: string; error?: string }[];
      expect(entries.slice(0, 10).every((e) => typeof e.id === 'number')).toBe(true);
      expect(entries[10]).toMatchObject({ email: 'old@example.com', error: 'duplicate' });
      expect(entries[11]).toMatchObject({ email: 'nope', error: expect.any(String) });
      expect(final.body.emailList).toMatchObject({ email_count: 11, rejected_count: 2 });
      if (first && first.status === 201) expect(final.body.emails).toEqual(first.body.emails);
      // And the list counts exactly that, also once anything left unsettled is settled
      await settleLeftovers();
      expect(await getList(listId, tenant)).toMatchObject({ email_count: 11, rejected_count: 2 });
    });
  });

  it('counts the rejected entries of an add that stores none once, when its answer was lost', async () => {
    // Given a list
    const tenant = await aTenant();
    const listId = await newList(tenant);
    const key = newKey();
    // When an add of two bad entries commits and every answer to it is lost, and the client retries
    proxy.inject({ operation: 'TransactWriteItems', match: (s) => touches(s, '#IDEM#'), fault: 'lose-reply' });
    const first = await addToList(listId, ['nope', 'bad entry'], key, tenant).catch(() => undefined);
    expect(proxy.hits.size, 'the fault was met').toBeGreaterThan(0);
    proxy.clear();
    const { final, all } = await untilAnswered(() => addToList(listId, ['nope', 'bad entry'], key, tenant));
    // Then both are rejected once
    expect([first, ...all].filter((r) => r && r.status >= 400 && r.status < 500)).toEqual([]);
    expect(final.body.emailList).toMatchObject({ email_count: 0, rejected_count: 2 });
    expect(await getList(listId, tenant)).toMatchObject({ email_count: 0, rejected_count: 2 });
  });

  it('answers 500, not 401, when the authorizer cannot read the token', async () => {
    proxy.inject({ operation: 'GetItem', match: (s) => touches(s, 'TOKEN#'), fault: 'error' });
    const res = await messaging.call('GET', '/v1/conversations', { token: t.token });
    expect(res.status).toBe(500);
    expect(res.body.error.type).toBe('api_error');
    proxy.clear();
    expect((await messaging.call('GET', '/v1/conversations', { token: t.token })).status).toBe(200);
  });

  it(
    'loses nothing, doubles nothing and answers no 4xx over hundreds of creates with 17 % of writes failing',
    { timeout: 300_000 },
    async () => {
      // Given an account with two conversations and three lists, and an address pool the adds draw from (so they overlap)
      const tenant = await aTenant();
      const conversations = [await openConversation(tenant), await openConversation(tenant)];
      const lists = [await newList(tenant), await newList(tenant), await newList(tenant)];
      const pool = Array.from({ length: 60 }, (_, i) => `p${i}@${i % 2 ? 'example.com' : 'gmail.com'}`);
      type Sent =
        | { kind: 'message'; conversationId: string; text: string; res?: ApiResponse }
        | { kind: 'emails'; batch: string[]; res?: ApiResponse }
        | { kind: 'add'; listId: number; batch: string[]; res?: ApiResponse };
      const requests: Sent[] = Array.from({ length: 240 }, (_, i): Sent => {
        const kind = i % 3;
        if (kind === 0) return { kind: 'message', conversationId: conversations[i % 2]!, text: `m${i}` };
        const size = 1 + (i % 7);
        if (kind === 1)
          return { kind: 'emails', batch: Array.from({ length: size }, (_, j) => (j === 3 ? 'bad entry' : `e${i}-${j}@example.com`)) };
        return {
          kind: 'add',
          listId: lists[i % 3]!,
          batch: Array.from({ length: size }, (_, j) => (j === 5 ? 'nope' : pool[(i * 7 + j * 13) % pool.length]!)),
        };
      });
      // When they are sent eight at a time with writes throttled, refused and carried out with their answers lost
      proxy.randomly({ throttle: 0.1, error: 0.02, loseReply: 0.05 });
      const statuses: number[] = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next < requests.length) {
            const r = requests[next++]!;
            const key = newKey();
            const send =
              r.kind === 'message'
                ? () => sendMessage(r.conversationId, r.text, key, tenant)
                : r.kind === 'emails'
                  ? () => createEmails(r.batch, key, tenant)
                  : () => addToList(r.listId, r.batch, key, tenant);
            const { final, all } = await untilAnswered(send, 30);
            statuses.push(...all.map((a) => a.status));
            r.res = final;
          }
        }),
      );
      proxy.clear();
      await settleLeftovers();
      const hit = [...proxy.hits.values()].reduce((a, b) => a + b, 0);
      expect(hit).toBeGreaterThan(50);
      // Then no request was answered a 4xx on any try
      expect(statuses.filter((s) => s >= 400 && s < 500)).toEqual([]);
      // And every message was stored exactly once, under the id answered
      for (const conversationId of conversations) {
        const sent = requests.filter((r) => r.kind === 'message' && r.conversationId === conversationId);
        const stored = await messagesOf(conversationId, tenant);
        expect(stored.map((m) => m.id).sort()).toEqual(sent.map((r) => r.res!.body.id).sort());
        expect(stored.map((m) => m.message).sort()).toEqual(sent.map((r) => (r as { text: string }).text).sort());
      }
      // And every standalone email answered is stored, once
      const answered = requests.flatMap((r) => (r.kind === 'emails' ? (r.res!.body.emails as { id?: number }[]) : []));
      const ids = answered.flatMap((e) => (e.id === undefined ? [] : [e.id]));
      expect(answered.filter((e) => e.id === undefined)).toHaveLength(
        requests.filter((r) => r.kind === 'emails' && r.batch.length > 3).length,
      );
      expect((await standaloneEmails(tenant)).map((e) => e.id).sort()).toEqual(ids.sort());
      // And each list accepted each distinct address exactly once over all answers, and counts exactly
      for (const listId of lists) {
        const adds = requests.filter((r): r is Extract<Sent, { kind: 'add' }> => r.kind === 'add' && r.listId === listId);
        const entries = adds.flatMap((r) => r.res!.body.emails as { id?: number; email: string; error?: string }[]);
        const accepted = entries.filter((e) => e.id !== undefined).map((e) => e.email);
        const valid = adds.flatMap((r) => r.batch.filter((a) => a !== 'nope'));
        expect(accepted.sort()).toEqual([...new Set(valid)].sort());
        const list = await getList(listId, tenant);
        expect(list).toMatchObject({ email_count: accepted.length, rejected_count: entries.length - accepted.length });
      }
    },
  );
});
