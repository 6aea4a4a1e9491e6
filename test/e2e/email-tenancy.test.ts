import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aTenant, type Tenant } from '../steps/given.ts';
import { emailEnv, type EmailEnv } from '../steps/email-env.ts';
import { eventually } from '../steps/eventually.ts';
import { apiClient, transports, type ApiClient } from '../steps/when.ts';

/** Another account's emails and lists must look exactly like ids that never existed, and must not change. */
describe.each(transports('email'))('email API tenancy over %s', (transport) => {
  let api: ApiClient;
  let env: EmailEnv | undefined;
  let owner: Tenant;
  let intruder: Tenant;
  let listId: number;
  let listedEmailId: number;
  let standaloneId: number;
  let importId: string;
  let exportId: string;

  beforeAll(async () => {
    env = await emailEnv();
    api = await apiClient('email', transport);
    [owner, intruder] = await Promise.all([aTenant(), aTenant()]);
    listId = (await api.call('POST', '/api/v1/emailList', { token: owner.token, json: { name: 'private' } })).body.id;
    const added = await api.call('POST', `/api/v1/emailList/${listId}/emails`, {
      token: owner.token,
      json: { emails: ['own@example.com'] },
    });
    listedEmailId = added.body.emails[0].id;
    standaloneId = (await api.call('POST', '/api/v1/emails', { token: owner.token, json: { emails: ['solo@example.com'] } })).body.emails[0]
      .id;
    importId = (await api.call('POST', `/api/v1/emailList/${listId}/imports`, { token: owner.token, json: {} })).body.id;
    // Let the worker finish first, so any later change can only come from the intruder.
    await eventually(
      async () => (await api.call('GET', `/api/v1/emailList/${listId}`, { token: owner.token })).body.status === 'completed',
      { what: `list ${listId} completed` },
    );
    exportId = (await api.call('POST', `/api/v1/emailList/${listId}/exports`, { token: owner.token, json: {} })).body.id;
    await eventually(
      async () =>
        (await api.call('GET', `/api/v1/emailList/${listId}/exports/${exportId}`, { token: owner.token })).body.status === 'completed',
      { what: `export ${exportId} completed` },
    );
  });
  afterAll(async () => {
    await api.close();
    await env?.stop();
  });

  const snapshot = async () => ({
    list: (await api.call('GET', `/api/v1/emailList/${listId}`, { token: owner.token })).body,
    listEmails: (await api.call('GET', `/api/v1/emailList/${listId}/emails`, { token: owner.token })).body.emails.map(
      (e: { id: number }) => e.id,
    ),
    standalone: (await api.call('GET', `/api/v1/email/${standaloneId}`, { token: owner.token })).status,
    listed: (await api.call('GET', `/api/v1/email/${listedEmailId}`, { token: owner.token })).status,
    import: (await api.call('GET', `/api/v1/emailList/${listId}/imports/${importId}`, { token: owner.token })).body.status,
    // The download URL is made for each read: the rest of the export is what must not change.
    export: (({ download_url: _url, ...rest }) => rest)(
      (await api.call('GET', `/api/v1/emailList/${listId}/exports/${exportId}`, { token: owner.token })).body,
    ),
  });

  const attempts: [string, () => string, unknown?][] = [
    ['GET', () => `/api/v1/email/${standaloneId}`],
    ['GET', () => `/api/v1/email/${listedEmailId}`],
    ['DELETE', () => `/api/v1/email/${standaloneId}`],
    ['DELETE', () => `/api/v1/email/${listedEmailId}`],
    ['GET', () => `/api/v1/emailList/${listId}`],
    ['GET', () => `/api/v1/emailList/${listId}/emails`],
    ['POST', () => `/api/v1/emailList/${listId}/emails`, { emails: ['sneaky@example.com'] }],
    ['POST', () => `/api/v1/emailList/${listId}/imports`, {}],
    ['GET', () => `/api/v1/emailList/${listId}/imports/${importId}`],
    ['POST', () => `/api/v1/emailList/${listId}/exports`, { deliverability: ['deliverable'] }],
    ['GET', () => `/api/v1/emailList/${listId}/exports/{exportId}`.replace('{exportId}', exportId)],
    ['DELETE', () => `/api/v1/emailList/${listId}`],
  ];

  it.each(attempts)("%s %s with another account's ids answers 404 and changes nothing", async (method, path, json) => {
    const before = await snapshot();
    const res = await api.call(method, path(), { token: intruder.token, ...(json ? { json } : {}) });
    expect(res.status).toBe(404);
    expect(res.body.error.type).toBe('invalid_request_error');
    expect(await snapshot()).toEqual(before);
  });

  it("never lists another account's emails or lists", async () => {
    expect((await api.call('GET', '/api/v1/emails', { token: intruder.token })).body).toEqual({ emails: [], page: 1, totalPages: 1 });
    expect((await api.call('GET', '/api/v1/emailLists', { token: intruder.token })).body).toEqual({
      emailLists: [],
      page: 1,
      totalPages: 1,
    });
  });

  it("creates only in the caller's own account", async () => {
    // Given the owner's lists and standalone emails
    const before = await snapshot();
    const ids = (items: { id: number }[]) => items.map((item) => item.id);
    const ownerLists = async () => ids((await api.call('GET', '/api/v1/emailLists', { token: owner.token })).body.emailLists);
    const ownerEmails = async () => ids((await api.call('GET', '/api/v1/emails', { token: owner.token })).body.emails);
    const [listsBefore, emailsBefore] = [await ownerLists(), await ownerEmails()];
    // When another account creates a list and standalone emails
    expect((await api.call('POST', '/api/v1/emailList', { token: intruder.token, json: { name: 'theirs' } })).status).toBe(201);
    expect((await api.call('POST', '/api/v1/emails', { token: intruder.token, json: { emails: ['theirs@example.com'] } })).status).toBe(
      201,
    );
    // Then nothing of the owner's changed, and the owner lists none of them
    expect(await snapshot()).toEqual(before);
    expect(await ownerLists()).toEqual(listsBefore);
    expect(await ownerEmails()).toEqual(emailsBefore);
  });

  it('needs a bearer token on every email route', async () => {
    for (const [method, path] of attempts) {
      const res = await api.call(method, path(), { token: null });
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
    }
  });
});
