import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INVALID_SCORE_CAP, SCORE_WEIGHTS } from '#shared/email/validator/index';
import { aTenant, type Tenant } from '../steps/given.ts';
import { emailEnv, type EmailEnv } from '../steps/email-env.ts';
import { eventually } from '../steps/eventually.ts';
import { apiClient, transports, type ApiClient } from '../steps/when.ts';

describe.each(transports('email'))('email validation API over %s', (transport) => {
  if (transport === 'remote') {
    // These cases assert answers from the loopback demo DNS zones, which a deployed stack cannot see.
    it.skip('runs locally only', () => undefined);
    return;
  }
  let api: ApiClient;
  let env: EmailEnv | undefined;
  let t: Tenant;
  const as = (tenant: Tenant) => ({ token: tenant.token });

  beforeAll(async () => {
    env = await emailEnv();
    api = await apiClient('email', transport);
    t = await aTenant();
  });
  afterAll(async () => {
    await api.close();
    await env?.stop();
  });

  const createEmails = (emails: unknown, tenant = t) => api.call('POST', '/api/v1/emails', { ...as(tenant), json: { emails } });
  const list = async (tenant = t, name = 'Leads') =>
    (await api.call('POST', '/api/v1/emailList', { ...as(tenant), json: { name, description: 'from the fair' } })).body;
  const addToList = (id: number, emails: unknown, tenant = t) =>
    api.call('POST', `/api/v1/emailList/${id}/emails`, { ...as(tenant), json: { emails } });
  const getList = async (id: number, tenant = t) => (await api.call('GET', `/api/v1/emailList/${id}`, as(tenant))).body;

  describe('POST /api/v1/emails', () => {
    it('validates a batch in order, reporting bad entries in place', async () => {
      const res = await createEmails([
        'Jane.Doe+news@Example.com',
        'not an email',
        42,
        'info@aonly.test',
        'x@nullmx.test',
        'y@nowhere.test',
      ]);
      expect(res.status).toBe(201);
      const [jane, bad, num, info, nullMx, nx] = res.body.emails;
      expect(jane).toMatchObject({
        id: expect.any(Number),
        email: 'Jane.Doe+news@Example.com',
        status: 'completed',
        is_valid: true,
        mx_record_count: 2,
        connectable_mx_record_count: 2,
        can_connect: true,
        is_alias: true,
        canonical_email: 'Jane.Doe@example.com',
        score: expect.any(Number),
      });
      expect(jane.email_list_id).toBeUndefined();
      expect(bad).toEqual({ email: 'not an email', error: expect.any(String) });
      expect(num).toEqual({ email: 42, error: expect.any(String) });
      expect(info).toMatchObject({ status: 'completed', is_valid: true, mx_record_count: 0, is_username_generic: true });
      expect(nullMx).toMatchObject({ status: 'completed', is_valid: false });
      expect(nx).toMatchObject({ status: 'completed', is_valid: false });
      expect(nullMx.score).toBeLessThan(jane.score);
    });

    it('reports an entry that is not Unicode text (a lone surrogate) in its place, and processes the others', async () => {
      // Given a batch whose second entry holds a lone surrogate, escaped in the JSON as a client may send it
      const body = '{"emails":["info@aonly.test","\\ud800@aonly.test"]}';
      // When it is created: then the batch is taken, the good entry completed, the other an error entry as sent
      const res = await api.call('POST', '/api/v1/emails', { ...as(t), raw: { body, contentType: 'application/json' } });
      expect(res.status, res.text).toBe(201);
      const [good, bad] = res.body.emails;
      expect(good).toMatchObject({ email: 'info@aonly.test', status: 'completed' });
      expect(bad).toEqual({ email: '\ud800@aonly.test', error: expect.stringContaining('not valid Unicode text') });
      // And a lone surrogate anywhere else is still the request's error
      const elsewhere = await api.call('POST', '/api/v1/emailList', {
        ...as(t),
        raw: { body: '{"name":"\\ud800"}', contentType: 'application/json' },
      });
      expect(elsewhere.body.error).toMatchObject({ code: 'parameter_invalid', param: 'name' });
    });

    it('reports the classification flags and canonical form', async () => {
      const res = await createEmails([
        'boss@agency.gov',
        'J.o.e+promo@gmail.com',
        'admin@example.com',
        'a@sub.example.com',
        'person@example.com',
      ]);
      const [gov, gmail, role, sub, person] = res.body.emails;
      expect(gov).toMatchObject({ is_gov: true, is_edu: false, is_mil: false, is_free: false, is_valid: true });
      expect(gmail).toMatchObject({ is_free: true, is_alias: true, canonical_email: 'J.o.e@gmail.com', mx_record_count: 1 });
      expect(role).toMatchObject({ is_username_generic: true, is_alias: false, is_subdomain: false });
      expect(sub).toMatchObject({ is_subdomain: true, is_valid: false });
      // The score table of docs/email-validation.md: a role account and an alias each lose their weight; a perfect address scores 100.
      const weight = (signal: string) => SCORE_WEIGHTS.find((w) => w.signal === signal)!.points;
      expect(person.score).toBe(100);
      expect(role.score).toBe(100 - weight('not_role_account'));
      expect(sub.score).toBeLessThanOrEqual(INVALID_SCORE_CAP);
    });

    it('returns emails it could not finish in time as pending, and the worker completes them', async () => {
      const res = await createEmails(['someone@broken.test']);
      expect(res.body.emails[0]).toMatchObject({ status: 'pending' });
      expect(res.body.emails[0].score).toBeUndefined();
      // DNS keeps failing: after the queue's retries it ends as `error`, never stuck pending.
      const id = res.body.emails[0].id;
      const final = await eventually(
        async () => {
          const got = await api.call('GET', `/api/v1/email/${id}`, as(t));
          return got.body.status === 'error' && got.body;
        },
        { what: `email ${id} recorded as error`, timeoutMs: 30_000 },
      );
      expect(final.score).toBeUndefined();
    }, 40_000);

    it.each([
      [{ emails: [] }],
      [{ emails: Array.from({ length: 101 }, (_, i) => `u${i}@example.com`) }],
      [{ emails: 'a@example.com' }],
      [{}],
      [{ emails: ['a@example.com'], pageSize: 3 }],
    ])('rejects %j with 400 and creates nothing', async (json) => {
      const before = await api.call('GET', '/api/v1/emails', as(t));
      const res = await api.call('POST', '/api/v1/emails', { ...as(t), json });
      expect(res.status).toBe(400);
      expect(res.body.error.type).toBe('invalid_request_error');
      const after = await api.call('GET', '/api/v1/emails', as(t));
      expect(after.body.totalPages).toBe(before.body.totalPages);
      expect(after.body.emails.length).toBe(before.body.emails.length);
    });

    it('takes JSON only', async () => {
      const form = await api.call('POST', '/api/v1/emails', { ...as(t), form: { 'emails[]': 'a@example.com' } });
      expect(form.status).toBe(415);
      const broken = await api.call('POST', '/api/v1/emails', { ...as(t), raw: { body: '{"emails": [', contentType: 'application/json' } });
      expect(broken.status).toBe(400);
    });
  });

  describe('emails', () => {
    it('gets and deletes an email; unknown and malformed ids are 404', async () => {
      const { body } = await createEmails(['get.me@example.com']);
      const id = body.emails[0].id;
      const got = await api.call('GET', `/api/v1/email/${id}`, as(t));
      expect(got.status).toBe(200);
      expect(got.body).toEqual(body.emails[0]);
      const del = await api.call('DELETE', `/api/v1/email/${id}`, as(t));
      expect(del.body).toEqual({ id, deleted: true });
      expect((await api.call('GET', `/api/v1/email/${id}`, as(t))).status).toBe(404);
      expect((await api.call('DELETE', `/api/v1/email/${id}`, as(t))).status).toBe(404);
      for (const bad of ['abc', '0', '-1', '1.5', '99999999999999999999']) {
        expect((await api.call('GET', `/api/v1/email/${bad}`, as(t))).status).toBe(404);
      }
    });

    it('pages the standalone emails 100 at a time in ascending id order', async () => {
      const tenant = await aTenant();
      const empty = await api.call('GET', '/api/v1/emails', as(tenant));
      expect(empty.body).toEqual({ emails: [], page: 1, totalPages: 1 });
      for (let batch = 0; batch < 3; batch++) {
        await createEmails(
          Array.from({ length: 50 }, (_, i) => `p${batch}-${i}@example.com`),
          tenant,
        );
      }
      const first = await api.call('GET', '/api/v1/emails', as(tenant));
      expect(first.body).toMatchObject({ page: 1, totalPages: 2 });
      expect(first.body.emails).toHaveLength(100);
      const second = await api.call('GET', '/api/v1/emails', { ...as(tenant), query: { page: 2 } });
      expect(second.body.emails).toHaveLength(50);
      const ids = [...first.body.emails, ...second.body.emails].map((e: { id: number }) => e.id);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      expect(new Set(ids).size).toBe(150);

      // Deletes leave no hole in the pages: item 101 moves up to page 1.
      await api.call('DELETE', `/api/v1/email/${ids[3]}`, as(tenant));
      const again = await api.call('GET', '/api/v1/emails', as(tenant));
      expect(again.body.emails.map((e: { id: number }) => e.id)).toEqual([...ids.slice(0, 3), ...ids.slice(4, 101)]);
      const last = await api.call('GET', '/api/v1/emails', { ...as(tenant), query: { page: 2 } });
      expect(last.body.emails.map((e: { id: number }) => e.id)).toEqual(ids.slice(101));
    }, 60_000);

    it.each([
      ['0', 'page_out_of_range'],
      ['3', 'page_out_of_range'],
      ['2147483647', 'page_out_of_range'],
      ['99999999999999999999', 'page_out_of_range'],
      ['-1', 'parameter_invalid'],
      ['1.5', 'parameter_invalid'],
      ['two', 'parameter_invalid'],
      ['', 'parameter_invalid'],
    ])('answers 400 for page=%s (%s)', async (page, code) => {
      const res = await api.call('GET', '/api/v1/emails', { ...as(t), query: { page } });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ param: 'page', code });
      // A page out of range is named as sent, unless it was past what a number holds
      if (code === 'page_out_of_range') {
        expect(res.body.error.message).toMatch(page.length > 15 ? /^that page does not exist/ : new RegExp(`^page ${page} does not exist`));
      }
    });

    it('rejects unknown query parameters such as pageSize', async () => {
      const res = await api.call('GET', '/api/v1/emails', { ...as(t), query: { pageSize: 10 } });
      expect(res.status).toBe(400);
      expect(res.body.error.param).toBe('pageSize');
    });
  });

  describe('email lists', () => {
    it('creates a list completed with zero counts', async () => {
      const res = await api.call('POST', '/api/v1/emailList', { ...as(t), json: { name: 'Newsletter' } });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.any(Number),
        name: 'Newsletter',
        description: null,
        email_count: 0,
        rejected_count: 0,
        status: 'completed',
        progress: { pending: 0, insufficient_credits: 0, finished: 0 },
      });
      expect(await getList(res.body.id)).toEqual(res.body);
      // And a create sending back the description as a list shows it (null) is the same
      const again = await api.call('POST', '/api/v1/emailList', { ...as(t), json: { name: 'Newsletter', description: null } });
      expect(again.status).toBe(201);
      expect(again.body).toMatchObject({ name: 'Newsletter', description: null });
    });

    it('replays a list create under an Idempotency-Key, and a retry of an interrupted one finds the list it made', async () => {
      // Given a list created under a key, in a tenant of its own (to count its lists)
      const tenant = await aTenant();
      const create = (json: Record<string, unknown>) =>
        api.call('POST', '/api/v1/emailList', { ...as(tenant), json, headers: { 'Idempotency-Key': `list-${transport}` } });
      const first = await create({ name: 'Once' });
      // When it is sent again, and once with another name
      const replay = await create({ name: 'Once' });
      const other = await create({ name: 'Twice' });
      // Then the replay is the first answer, the other 422, and the account holds one list
      expect(first.status).toBe(201);
      expect(replay.status).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toEqual(first.body);
      expect(other.status).toBe(422);
      const lists = await api.call('GET', '/api/v1/emailLists', as(tenant));
      expect(lists.body.emailLists.map((l: { id: number }) => l.id)).toEqual([first.body.id]);
    });

    it.each([[{}], [{ name: '' }], [{ name: 5 }], [{ name: 'x', colour: 'red' }]])('rejects %j', async (json) => {
      const res = await api.call('POST', '/api/v1/emailList', { ...as(t), json });
      expect(res.status).toBe(400);
    });

    it('goes processing → completed with exact counts, duplicates and bad entries rejected', async () => {
      const l = await list();
      const res = await addToList(l.id, ['a@example.com', 'b@example.com', 'A@example.com', 'nope', 'c@aonly.test']);
      expect(res.status).toBe(201);
      expect(res.body.emailList).toMatchObject({ id: l.id, email_count: 3, rejected_count: 2, status: 'processing' });
      const { pending, finished } = res.body.emailList.progress;
      expect(pending).toBeGreaterThan(0);
      expect(pending + finished).toBe(3);
      expect(res.body.emails[2]).toEqual({ email: 'A@example.com', error: 'duplicate' });
      expect(res.body.emails[3]).toMatchObject({ email: 'nope', error: expect.any(String) });
      expect(res.body.emails[0]).toMatchObject({ email_list_id: l.id, status: 'pending' });

      const done = await eventually(
        async () => {
          const current = await getList(l.id);
          return current.status === 'completed' && current;
        },
        { what: `list ${l.id} completed` },
      );
      expect(done).toMatchObject({ email_count: 3, rejected_count: 2, progress: { pending: 0, insufficient_credits: 0, finished: 3 } });
      const emails = await api.call('GET', `/api/v1/emailList/${l.id}/emails`, as(t));
      expect(emails.body.emails.map((e: { status: string }) => e.status)).toEqual(['completed', 'completed', 'completed']);
      expect(emails.body.emails[0]).toMatchObject({ is_valid: true, mx_record_count: 2, email_list_id: l.id });

      const again = await addToList(l.id, ['a@example.com']);
      expect(again.body.emails[0]).toEqual({ email: 'a@example.com', error: 'duplicate' });
      expect(again.body.emailList).toMatchObject({ email_count: 3, rejected_count: 3, status: 'completed' });
    });

    it('keeps counts exact under three overlapping add requests', async () => {
      const l = await list();
      const batches = [0, 1, 2].map((b) => Array.from({ length: 60 }, (_, i) => `o${b}-${i}@example.com`));
      batches[2]!.push('o0-0@example.com', 'bad entry'); // one duplicate across requests, one invalid
      const results = await Promise.all(batches.map((b) => addToList(l.id, b)));
      expect(results.every((r) => r.status === 201)).toBe(true);
      const final = await eventually(
        async () => {
          const current = await getList(l.id);
          return current.status === 'completed' && current;
        },
        { what: `list ${l.id} completed`, timeoutMs: 30_000 },
      );
      expect(final).toMatchObject({ email_count: 180, rejected_count: 2 });
      const page1 = await api.call('GET', `/api/v1/emailList/${l.id}/emails`, as(t));
      const page2 = await api.call('GET', `/api/v1/emailList/${l.id}/emails`, { ...as(t), query: { page: 2 } });
      expect(page1.body).toMatchObject({ page: 1, totalPages: 2 });
      const ids = [...page1.body.emails, ...page2.body.emails].map((e: { id: number }) => e.id);
      expect(ids).toHaveLength(180);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
    }, 60_000);

    it('decrements email_count when one of its emails is deleted', async () => {
      const l = await list();
      const res = await addToList(l.id, ['d1@example.com', 'd2@example.com']);
      await api.call('DELETE', `/api/v1/email/${res.body.emails[0].id}`, as(t));
      expect(await getList(l.id)).toMatchObject({ email_count: 1 });
      await eventually(async () => (await getList(l.id)).status === 'completed', { what: `list ${l.id} completed` });
    });

    it('deletes a list with all its emails, gone for readers at once', async () => {
      const l = await list();
      const res = await addToList(
        l.id,
        Array.from({ length: 30 }, (_, i) => `gone${i}@example.com`),
      );
      const del = await api.call('DELETE', `/api/v1/emailList/${l.id}`, as(t));
      expect(del.body).toEqual({ id: l.id, deleted: true });
      expect((await api.call('GET', `/api/v1/emailList/${l.id}`, as(t))).status).toBe(404);
      expect((await api.call('GET', `/api/v1/emailList/${l.id}/emails`, as(t))).status).toBe(404);
      expect((await api.call('GET', `/api/v1/email/${res.body.emails[0].id}`, as(t))).status).toBe(404);
      expect((await addToList(l.id, ['late@example.com'])).status).toBe(404);
      expect((await api.call('DELETE', `/api/v1/emailList/${l.id}`, as(t))).status).toBe(404);
    });

    it('pages the lists', async () => {
      const tenant = await aTenant();
      const names = ['one', 'two', 'three'];
      for (const name of names) await list(tenant, name);
      const res = await api.call('GET', '/api/v1/emailLists', as(tenant));
      expect(res.body).toMatchObject({ page: 1, totalPages: 1 });
      expect(res.body.emailLists.map((l: { name: string }) => l.name)).toEqual(names);
      expect((await api.call('GET', '/api/v1/emailLists', { ...as(tenant), query: { page: 2 } })).status).toBe(400);
    });
  });
});
