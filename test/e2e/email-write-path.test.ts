import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCredits, creditBalance } from '#shared/data/accounts';
import { resetNumericIds } from '#shared/data/numeric-ids';
import { awaitingOutboxes, type OutboxItem } from '#shared/data/outbox';
import { db } from '#shared/db/client';
import { releaseHeld } from '#shared/email/outbox';
import { storeEmails } from '#shared/data/email-adds';
import { aTenant, type Tenant } from '../steps/given.ts';
import { emailEnv, type EmailEnv } from '../steps/email-env.ts';
import { eventually } from '../steps/eventually.ts';
import { apiClient, transports, type ApiClient } from '../steps/when.ts';
import { byCommand, countDynamoCalls } from '../steps/dynamodb-calls.ts';
import { scopedEnv } from '../steps/scoped-env.ts';

/** The email write path under what real clients do: bursts on one list, retries, hostile bodies. Over real sockets, or a deployed stack. */
const transport = transports('email').at(-1)!;

describe(`email write path over ${transport}`, () => {
  let api: ApiClient;
  let env: EmailEnv | undefined;
  let t: Tenant;
  // The invocations of this block share one local process (on Lambda, as many containers), fifty at once in
  // the concurrency tests: every deadline here stretches, so that a busy machine does not fail them on its speed
  // (with another test file beside it on 2 shared cores, the last of fifty adds once took over three times 20 s).
  const deadlines = scopedEnv(() => undefined);

  beforeAll(async () => {
    deadlines.set({ LOCAL_TIMEOUT_FACTOR: '6' });
    env = await emailEnv();
    api = await apiClient('email', transport);
    t = await aTenant();
  });
  afterAll(async () => {
    await api.close();
    await env?.stop();
    deadlines.restore();
  });

  const newList = async (tenant = t) =>
    (await api.call('POST', '/api/v1/emailList', { token: tenant.token, json: { name: 'burst' } })).body;
  const add = (id: number, emails: unknown[], headers: Record<string, string> = {}, tenant = t) =>
    api.call('POST', `/api/v1/emailList/${id}/emails`, { token: tenant.token, json: { emails }, headers });
  const getList = async (id: number, tenant = t) => (await api.call('GET', `/api/v1/emailList/${id}`, { token: tenant.token })).body;
  const completed = (id: number, tenant = t) =>
    eventually(
      async () => {
        const list = await getList(id, tenant);
        return list.status === 'completed' && list;
      },
      { what: `list ${id} completed`, timeoutMs: 120_000 },
    );
  const domains = ['example.com', 'gmail.com', 'agency.gov', 'aonly.test'];

  it('creates 30 lists of one account at once without an error, each on its own place of the list pages', async () => {
    // Given a fresh account
    const tenant = await aTenant();
    // When 30 clients create a list at the same moment (each creation counts itself in the account's page index, in its transaction)
    const created = await Promise.all(
      Array.from({ length: 30 }, (_, i) => api.call('POST', '/api/v1/emailList', { token: tenant.token, json: { name: `l${i}` } })),
    );
    // Then all are created, and the pages hold each exactly once
    expect(created.map((res) => res.status)).toEqual(Array(30).fill(201));
    const page = await api.call('GET', '/api/v1/emailLists', { token: tenant.token });
    expect(page.body).toMatchObject({ page: 1, totalPages: 1 });
    expect(page.body.emailLists.map((l: { id: number }) => l.id).sort()).toEqual(created.map((res) => res.body.id).sort());
  });

  it('takes 50 concurrent adds of 100 addresses to one list without an error, and counts exactly 5,000', { timeout: 180_000 }, async () => {
    // Given one list
    const list = await newList();
    // When 50 clients add 100 distinct addresses each, all at once
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, r) =>
        add(
          list.id,
          Array.from({ length: 100 }, (_, i) => `b${r}-${i}@${domains[i % domains.length]}`),
        ),
      ),
    );
    // Then every request succeeds and accepts all its addresses
    expect(responses.map((res) => res.status)).toEqual(Array(50).fill(201));
    expect(responses.every((res) => res.body.emails.every((e: { id?: number }) => typeof e.id === 'number'))).toBe(true);
    // And the list ends completed with exact counts, on exactly 50 pages
    expect(await completed(list.id)).toMatchObject({ email_count: 5000, rejected_count: 0 });
    const last = await api.call('GET', `/api/v1/emailList/${list.id}/emails`, { token: t.token, query: { page: 50 } });
    expect(last.body).toMatchObject({ page: 50, totalPages: 50 });
    expect(last.body.emails).toHaveLength(100);
    const ids = new Set(responses.flatMap((res) => res.body.emails.map((e: { id: number }) => e.id)));
    expect(ids.size).toBe(5000);
  });

  it(
    'accepts an address that concurrent requests share exactly once and rejects it as a duplicate in all the others',
    { timeout: 120_000 },
    async () => {
      // Given 10 requests that each carry the same 30 addresses and 20 of their own
      const list = await newList();
      const shared = Array.from({ length: 30 }, (_, i) => `Shared${i}@example.com`);
      const responses = await Promise.all(
        Array.from({ length: 10 }, (_, r) =>
          add(list.id, [
            ...shared.map((a) => (r % 2 ? a.toLowerCase() : a)),
            ...Array.from({ length: 20 }, (_, i) => `own${r}-${i}@gmail.com`),
          ]),
        ),
      );
      expect(responses.map((res) => res.status)).toEqual(Array(10).fill(201));
      // Then each shared address is accepted by one request and rejected as "duplicate" by the nine others
      for (let i = 0; i < shared.length; i++) {
        const answers = responses.map((res) => res.body.emails[i]);
        expect(answers.filter((e) => typeof e.id === 'number')).toHaveLength(1);
        expect(answers.filter((e) => e.error === 'duplicate')).toHaveLength(9);
      }
      // And the counts say so
      expect(await completed(list.id)).toMatchObject({ email_count: 30 + 200, rejected_count: 9 * 30 });
    },
  );

  describe('Idempotency-Key', () => {
    it('replays a retried POST /api/v1/emails: one debit, one stored batch, the first answer', async () => {
      const tenant = await aTenant();
      await addCredits(tenant.accountId, 10);
      const send = (emails: string[]) =>
        api.call('POST', '/api/v1/emails', { token: tenant.token, json: { emails }, headers: { 'Idempotency-Key': 'batch-7' } });
      const first = await send(['one@example.com', 'two@example.com']);
      const retry = await send(['one@example.com', 'two@example.com']);
      expect(first.status).toBe(201);
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.body).toEqual(first.body);
      expect(await creditBalance(tenant.accountId)).toBe(8);
      const stored = await api.call('GET', '/api/v1/emails', { token: tenant.token });
      expect(stored.body.emails).toHaveLength(2);
      // The same key with other parameters is refused
      const reused = await send(['three@example.com']);
      expect(reused.status).toBe(422);
      expect(reused.body.error.code).toBe('idempotency_key_reused');
    });

    it('replays a retried list add without storing, counting or debiting twice', async () => {
      const tenant = await aTenant();
      await addCredits(tenant.accountId, 10);
      const list = await newList(tenant);
      const emails = ['a@example.com', 'b@example.com', 'b@example.com', 'nope'];
      const first = await add(list.id, emails, { 'Idempotency-Key': 'add-1' }, tenant);
      const retry = await add(list.id, emails, { 'Idempotency-Key': 'add-1' }, tenant);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.body).toEqual(first.body);
      expect(await completed(list.id, tenant)).toMatchObject({ email_count: 2, rejected_count: 2 });
      expect(await creditBalance(tenant.accountId)).toBe(8);
      // The key belongs to this path: another list with the same key and body is a different request
      const other = await newList(tenant);
      expect((await add(other.id, emails, { 'Idempotency-Key': 'add-1' }, tenant)).status).toBe(422);
    });
  });

  it('refuses a deeply nested entry with a 400 before storing or debiting anything', async () => {
    const tenant = await aTenant();
    await addCredits(tenant.accountId, 5);
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const res = await api.call('POST', '/api/v1/emails', {
      token: tenant.token,
      raw: { body: `{"emails":["ok@example.com",${deep}]}`, contentType: 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json' });
    expect((await api.call('GET', '/api/v1/emails', { token: tenant.token })).body.emails).toEqual([]);
    expect(await creditBalance(tenant.accountId)).toBe(5);
  });
});

describe.skipIf(transport === 'remote')('email write path round trips', () => {
  // No worker: only the request's own calls are counted.
  let api: ApiClient;
  let env: EmailEnv | undefined;
  let t: Tenant;
  beforeAll(async () => {
    env = await emailEnv(undefined, { workers: false });
    api = await apiClient('email', 'handler');
    t = await aTenant();
  });
  afterAll(async () => {
    await api.close();
    await env?.stop();
  });
  const add = (id: number, emails: unknown[]) => api.call('POST', `/api/v1/emailList/${id}/emails`, { token: t.token, json: { emails } });
  const newList = async () => (await api.call('POST', '/api/v1/emailList', { token: t.token, json: { name: 'budget' } })).body;

  /** An add of three held addresses, and the copy of its outbox a release read just before the add's own settle dropped its counts. */
  async function heldAddRacedByARelease() {
    const tenant = await aTenant();
    await addCredits(tenant.accountId, 0);
    const list = (await api.call('POST', '/api/v1/emailList', { token: tenant.token, json: { name: 'held' } })).body;
    let copy: OutboxItem | undefined;
    const name = `read-outbox-before-its-counts-go-${list.id}`;
    db().middlewareStack.add(
      (next, context) => async (args) => {
        const dropsCounts = /\bREMOVE deltas\b/.test(String((args.input as { UpdateExpression?: string }).UpdateExpression));
        if (!copy && context.commandName === 'UpdateItemCommand' && dropsCounts) [copy] = await awaitingOutboxes(tenant.accountId);
        return next(args);
      },
      { step: 'initialize', name },
    );
    const emails = ['a@example.com', 'b@example.com', 'c@example.com'];
    const added = await api
      .call('POST', `/api/v1/emailList/${list.id}/emails`, { token: tenant.token, json: { emails } })
      .finally(() => db().middlewareStack.remove(name));
    expect(added.status).toBe(201);
    expect(copy?.deltas).toBeDefined();
    const shown = async () => (await api.call('GET', `/api/v1/emailList/${list.id}`, { token: tenant.token })).body;
    return { copy: copy!, shown };
  }

  it("counts held work once when credits are added as its add settles: a release holding the outbox's counts leaves them to the add", async () => {
    // Given a held add, and a release (credits added) holding a copy of its outbox with the counts still on it
    const { copy, shown } = await heldAddRacedByARelease();
    // When that release goes on with its copy, after the add's own settle
    expect(await releaseHeld(copy)).toBe('skipped');
    // Then the list counts the three held emails once
    expect(await shown()).toMatchObject({ email_count: 3, status: 'insufficient_credits', progress: { insufficient_credits: 3 } });
  });

  it('counts a stranded held add once, however many releases hold its outbox: the counts and their drop are one transaction', async () => {
    // Given the same race, the copy now looking stranded (its request would have died long ago)
    const { copy, shown } = await heldAddRacedByARelease();
    const stranded = { ...copy, created_at_ms: copy.created_at_ms - 3 * 60_000 };
    // When two releases go on with it at once
    await Promise.all([releaseHeld(stranded), releaseHeld(stranded)]);
    // Then the counts the add applied stand alone
    expect(await shown()).toMatchObject({ email_count: 3, progress: { insufficient_credits: 3 } });
  });

  it('applies the counts of a held add whose request died before them, once, when two releases find it', async () => {
    // Given three held addresses stored by a request that died before its settle (its outbox still carries the counts)
    const tenant = await aTenant();
    await addCredits(tenant.accountId, 0);
    const list = (await api.call('POST', '/api/v1/emailList', { token: tenant.token, json: { name: 'stranded' } })).body;
    const [chunk] = await storeEmails(
      tenant.accountId,
      { kind: 'list', listId: list.id },
      ['x@example.com', 'y@example.com', 'z@example.com'],
      0,
    );
    const stranded = { ...chunk!.outbox, created_at_ms: chunk!.outbox.created_at_ms - 3 * 60_000 };
    expect(stranded.deltas).toBeDefined();
    // When two releases find it at once
    await Promise.all([releaseHeld(stranded), releaseHeld(stranded)]);
    // Then the list counts them once, still held for credits
    const shown = (await api.call('GET', `/api/v1/emailList/${list.id}`, { token: tenant.token })).body;
    expect(shown).toMatchObject({ email_count: 3, status: 'insufficient_credits', progress: { insufficient_credits: 3 } });
  });

  it('adds 100 addresses to a list in a fixed number of DynamoDB calls, whatever the list holds', async () => {
    // Given a list that already holds 1,000 emails
    const list = await newList();
    for (let r = 0; r < 10; r++)
      await add(
        list.id,
        Array.from({ length: 100 }, (_, i) => `old${r}-${i}@example.com`),
      );
    // When 100 more are added, by a container that holds no block of ids yet (one fresh from a cold start;
    // a warm one takes a block at most once per second or per 1,000 ids, so whether this add takes one would
    // depend on the adds before it)
    resetNumericIds();
    const emails = Array.from({ length: 100 }, (_, i) => `new${i}@example.com`);
    const { result, calls: made } = await countDynamoCalls(() => add(list.id, emails));
    const calls = byCommand(made);
    expect(result.status).toBe(201);
    // Then the calls are the budget of docs/data-model.md: token, balance, reservation, two chunk
    // transactions (guards and outbox), the emails in batches of 25, counts applied to the list and
    // its block(s), outboxes kept as markers, tokens released, and the block of ids
    expect(calls.GetItem).toBe(2);
    expect(calls.TransactWriteItems).toBe(2);
    expect(calls.BatchWriteItem).toBe(4 + 1);
    expect(calls.UpdateItem).toBe(5 + 1);
    expect(Object.keys(calls).sort()).toEqual(['BatchWriteItem', 'GetItem', 'TransactWriteItems', 'UpdateItem']);
  });
});
