import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '#shared/routes';
import { resetNumericIds } from '#shared/data/numeric-ids';
import { clearContactCache } from '#shared/messaging/contact-cache';
import { countRoundTrips } from '../steps/dynamodb-calls.ts';
import { emailEnv, type EmailEnv } from '../steps/email-env.ts';
import { aTenant, type Tenant } from '../steps/given.ts';
import { apiClient, type ApiClient, type ApiResponse } from '../steps/when.ts';

/**
 * The round-trip budget of every route: the most DynamoDB and SQS calls one
 * request may make, by command, in the scenario given for it (a small
 * account: a few messages, a list of three addresses). The token's GetItem
 * is the authorizer's: on AWS it runs once per token per AUTH_CACHE_SECONDS,
 * here on every request. docs/performance.md lists the same table; a call
 * added to a route fails here until the budget (and the table) say why.
 */
type Budget = Record<string, number>;
const BUDGETS: Record<string, Budget> = {
  'GET /v1/conversations': { 'DynamoDB.GetItem': 1, 'DynamoDB.Query': 1 },
  'POST /v1/conversations': { 'DynamoDB.GetItem': 2, 'DynamoDB.TransactWriteItems': 1 },
  'GET /v1/conversations/{id}': { 'DynamoDB.GetItem': 2 },
  'PUT /v1/conversations/{id}': { 'DynamoDB.GetItem': 2, 'DynamoDB.UpdateItem': 2, 'DynamoDB.Query': 2, 'DynamoDB.TransactWriteItems': 1 },
  // A one-to-one thread's purge batch also reads whether the other participant still has it (their guard).
  'DELETE /v1/conversations/{id}': {
    'DynamoDB.GetItem': 3,
    'DynamoDB.TransactWriteItems': 1,
    'DynamoDB.UpdateItem': 1,
    'DynamoDB.Query': 2,
    'DynamoDB.BatchWriteItem': 1,
  },
  // A one-to-one thread's entries carry its messages: the page is the Query; the senders on a cold container.
  'GET /v1/messages': { 'DynamoDB.GetItem': 1, 'DynamoDB.Query': 1, 'DynamoDB.BatchGetItem': 1 },
  'POST /v1/messages': { 'DynamoDB.GetItem': 3, 'DynamoDB.TransactWriteItems': 1, 'DynamoDB.BatchGetItem': 1 },
  'GET /v1/messages/{id}': { 'DynamoDB.GetItem': 2, 'DynamoDB.BatchGetItem': 1 },
  // One-to-one: the message and both entries' copies in one transaction, then the message read back; a group's: one UpdateItem.
  'PUT /v1/messages/{id}': {
    'DynamoDB.GetItem': 3,
    'DynamoDB.BatchGetItem': 2,
    'DynamoDB.UpdateItem': 1,
    'DynamoDB.TransactWriteItems': 1,
  },
  'DELETE /v1/messages/{id}': {
    'DynamoDB.GetItem': 4,
    'DynamoDB.BatchGetItem': 1,
    'DynamoDB.TransactWriteItems': 1,
    'DynamoDB.UpdateItem': 2,
  },
  // Storage calls (presigned requests to S3) are not DynamoDB or SQS calls: a pending file's check adds one HEAD.
  'POST /v1/files': { 'DynamoDB.GetItem': 1, 'DynamoDB.PutItem': 1 },
  'GET /v1/files/{id}': { 'DynamoDB.GetItem': 2, 'DynamoDB.UpdateItem': 1 },
  'POST /v1/contacts': { 'DynamoDB.GetItem': 1, 'DynamoDB.TransactWriteItems': 1 },
  'GET /v1/contacts': { 'DynamoDB.GetItem': 1, 'DynamoDB.Query': 1 },
  'GET /v1/contacts/{id}': { 'DynamoDB.GetItem': 2 },
  'PUT /v1/contacts/{id}': { 'DynamoDB.GetItem': 2, 'DynamoDB.TransactWriteItems': 1 },
  // The inline part of the purge: the contact's tokens, its group, then its (empty) list of conversations.
  'DELETE /v1/contacts/{id}': {
    'DynamoDB.GetItem': 2,
    'DynamoDB.TransactWriteItems': 2,
    'DynamoDB.UpdateItem': 1,
    'DynamoDB.Query': 6,
    'DynamoDB.BatchWriteItem': 2,
  },
  'POST /v1/contacts/{id}/tokens': { 'DynamoDB.GetItem': 2, 'DynamoDB.PutItem': 1 },
  'GET /v1/contacts/{id}/tokens': { 'DynamoDB.GetItem': 2, 'DynamoDB.Query': 1 },
  'DELETE /v1/contacts/{id}/tokens/{token_id}': { 'DynamoDB.GetItem': 2, 'DynamoDB.Query': 1, 'DynamoDB.UpdateItem': 1 },
  // Members are checked in one batch read and written in batch writes (25 a call), the group item last.
  'POST /v1/groups': { 'DynamoDB.GetItem': 1, 'DynamoDB.BatchGetItem': 1, 'DynamoDB.BatchWriteItem': 1, 'DynamoDB.PutItem': 1 },
  'GET /v1/groups': { 'DynamoDB.GetItem': 1, 'DynamoDB.Query': 1 },
  'GET /v1/groups/{id}': { 'DynamoDB.GetItem': 2 },
  'PUT /v1/groups/{id}': { 'DynamoDB.GetItem': 1, 'DynamoDB.UpdateItem': 1 },
  'DELETE /v1/groups/{id}': {
    'DynamoDB.GetItem': 1,
    'DynamoDB.TransactWriteItems': 1,
    'DynamoDB.UpdateItem': 1,
    'DynamoDB.Query': 2,
    'DynamoDB.BatchWriteItem': 1,
  },
  // One write per membership change, whatever the group's size.
  'POST /v1/groups/{id}/members': { 'DynamoDB.GetItem': 3, 'DynamoDB.TransactWriteItems': 1 },
  'GET /v1/groups/{id}/members': { 'DynamoDB.GetItem': 2, 'DynamoDB.Query': 1, 'DynamoDB.BatchGetItem': 1 },
  'DELETE /v1/groups/{id}/members/{contact_id}': { 'DynamoDB.GetItem': 2, 'DynamoDB.TransactWriteItems': 1 },
  // The endpoint and its account's count in one transaction (an account made before the count counts its endpoints once).
  'POST /v1/webhook_endpoints': { 'DynamoDB.GetItem': 1, 'DynamoDB.TransactWriteItems': 1 },
  'GET /v1/webhook_endpoints': { 'DynamoDB.GetItem': 1, 'DynamoDB.Query': 1 },
  'GET /v1/webhook_endpoints/{id}': { 'DynamoDB.GetItem': 2 },
  'PUT /v1/webhook_endpoints/{id}': { 'DynamoDB.GetItem': 2, 'DynamoDB.UpdateItem': 1 },
  'DELETE /v1/webhook_endpoints/{id}': { 'DynamoDB.GetItem': 2, 'DynamoDB.TransactWriteItems': 1 },
  'POST /v1/webhook_endpoints/{id}/rotate_secret': { 'DynamoDB.GetItem': 2, 'DynamoDB.UpdateItem': 1 },
  'GET /v1/account': { 'DynamoDB.GetItem': 2 },
  'GET /v1/events': { 'DynamoDB.GetItem': 1, 'DynamoDB.Query': 1 },
  'GET /api/v1/account': { 'DynamoDB.GetItem': 2 },
  'POST /api/v1/emails': {
    'DynamoDB.GetItem': 2,
    'DynamoDB.UpdateItem': 6,
    'DynamoDB.TransactWriteItems': 2,
    'DynamoDB.BatchWriteItem': 1,
    'DynamoDB.DeleteItem': 1,
  },
  'GET /api/v1/emails': { 'DynamoDB.GetItem': 2, 'DynamoDB.Query': 1 },
  'GET /api/v1/email/{id}': { 'DynamoDB.GetItem': 2 },
  'DELETE /api/v1/email/{id}': {
    'DynamoDB.GetItem': 3,
    'DynamoDB.TransactWriteItems': 1,
    'DynamoDB.UpdateItem': 1,
    'DynamoDB.DeleteItem': 1,
  },
  'POST /api/v1/emailList': { 'DynamoDB.GetItem': 1, 'DynamoDB.UpdateItem': 1, 'DynamoDB.TransactWriteItems': 1 },
  'GET /api/v1/emailLists': { 'DynamoDB.GetItem': 2, 'DynamoDB.Query': 1 },
  'GET /api/v1/emailList/{id}': { 'DynamoDB.GetItem': 2 },
  // The purge's passes inline: the emails, the blocks, the exports (whose files go by presigned DELETE), then a pass
  // finding none of the three.
  'DELETE /api/v1/emailList/{id}': {
    'DynamoDB.GetItem': 2,
    'DynamoDB.TransactWriteItems': 1,
    'DynamoDB.UpdateItem': 2,
    'DynamoDB.DeleteItem': 1,
    'DynamoDB.Query': 9,
    'DynamoDB.BatchWriteItem': 3,
  },
  'GET /api/v1/emailList/{id}/emails': { 'DynamoDB.GetItem': 2, 'DynamoDB.Query': 1 },
  // The create writes a small list's CSV inline: the export with its list (one read), its members (a Query that finds
  // the end), the finished job.
  'POST /api/v1/emailList/{id}/exports': {
    'DynamoDB.GetItem': 1,
    'DynamoDB.BatchGetItem': 1,
    'DynamoDB.TransactWriteItems': 1,
    'DynamoDB.Query': 2,
    'DynamoDB.UpdateItem': 2,
    'DynamoDB.DeleteItem': 1,
  },
  // The export and its list in one read; the download URL is presigned, no call.
  'GET /api/v1/emailList/{id}/exports/{exportId}': { 'DynamoDB.GetItem': 1, 'DynamoDB.BatchGetItem': 1 },
  'POST /api/v1/emailList/{id}/emails': {
    'DynamoDB.GetItem': 2,
    'DynamoDB.UpdateItem': 6,
    'DynamoDB.TransactWriteItems': 1,
    'DynamoDB.BatchWriteItem': 1,
    'DynamoDB.PutItem': 1,
    'SQS.SendMessageBatch': 1,
  },
  // The job's first look, queued with the upload poll's delay.
  'POST /api/v1/emailList/{id}/imports': { 'DynamoDB.GetItem': 2, 'DynamoDB.TransactWriteItems': 1, 'SQS.SendMessageBatch': 1 },
  // The import read with its list (a deleted list's imports are gone at once); started, with its list's hold, in one
  // transaction.
  'GET /api/v1/emailList/{id}/imports/{importId}': {
    'DynamoDB.GetItem': 1,
    'DynamoDB.BatchGetItem': 1,
    'DynamoDB.TransactWriteItems': 1,
    'DynamoDB.UpdateItem': 1,
    'SQS.SendMessage': 1,
  },
};

/** Runs the request, records its calls, and holds them to the route's budget. */
async function withinBudget(route: string, request: () => Promise<ApiResponse>): Promise<ApiResponse> {
  // A container's block of numeric ids lasts a second: whether a request takes a new one depends on
  // timing, so every request starts without one (the budget counts that UpdateItem where ids are made).
  resetNumericIds();
  const { result, calls } = await countRoundTrips(request);
  if (process.env.SHOW_CALLS) console.log(route, JSON.stringify(calls));
  expect(result.status, `${route}: ${result.text}`).toBeLessThan(300);
  const budget = BUDGETS[route]!;
  for (const [command, count] of Object.entries(calls)) {
    expect(count, `${route} makes ${count} ${command}, budget ${budget[command] ?? 0}`).toBeLessThanOrEqual(budget[command] ?? 0);
  }
  // Locally every function sees every queue; deployed, a route reaches only the queues its row declares.
  if (Object.keys(calls).some((command) => command.startsWith('SQS.'))) {
    const row = routes.find((r) => `${r.method} ${r.path}` === route);
    expect(row?.sends ?? [], `${route} sends to a queue: its row must declare it (sends)`).not.toHaveLength(0);
  }
  return result;
}

describe('round trips per request (in-process, so every call is seen)', () => {
  let messaging: ApiClient;
  let email: ApiClient;
  let env: EmailEnv | undefined;
  let t: Tenant;

  beforeAll(async () => {
    // No workers: their calls would be counted as the request's.
    env = await emailEnv(undefined, { workers: false });
    process.env.ALLOW_PRIVATE_WEBHOOKS = 'true';
    messaging = await apiClient('messaging', 'handler');
    email = await apiClient('email', 'handler');
    t = await aTenant();
  });
  afterAll(async () => {
    await messaging.close();
    await email.close();
    await env?.stop();
  });

  it('covers every route of both APIs, and docs/performance.md lists the same budgets', () => {
    expect(Object.keys(BUDGETS).sort()).toEqual(routes.map((r) => `${r.method} ${r.path}`).sort());
    const docs = readFileSync('docs/performance.md', 'utf8');
    for (const [route, budget] of Object.entries(BUDGETS)) expect(docs).toContain(budgetRow(route, budget));
  });

  it('holds the messaging routes to their budgets', async () => {
    const as = { token: t.token };
    const created = await withinBudget('POST /v1/conversations', () =>
      messaging.call('POST', '/v1/conversations', { ...as, form: { contact_id: t.contactIds.bob! } }),
    );
    const conv = created.body.id as string;
    await withinBudget('GET /v1/conversations', () => messaging.call('GET', '/v1/conversations', as));
    await withinBudget('GET /v1/conversations/{id}', () => messaging.call('GET', `/v1/conversations/${conv}`, as));
    // Opening reads the thread for this user: entries, the read transaction, the read position.
    const bobs = await messaging.call('POST', '/v1/conversations', { token: t.token2, form: { contact_id: t.userContactId } });
    await messaging.call('POST', '/v1/messages', { token: t.token2, form: { conversation_id: bobs.body.id, message: 'hi' } });
    await withinBudget('PUT /v1/conversations/{id}', () =>
      messaging.call('PUT', `/v1/conversations/${conv}`, { ...as, form: { is_muted: 'true', opened: 'true' } }),
    );
    const sent = await withinBudget('POST /v1/messages', () =>
      messaging.call('POST', '/v1/messages', { ...as, form: { conversation_id: conv, message: 'hello' } }),
    );
    const msg = sent.body.id as string;
    for (let i = 0; i < 3; i++)
      await messaging.call('POST', '/v1/messages', { ...as, form: { conversation_id: conv, message: `more ${i}` } });
    clearContactCache(); // a cold container: the page reads its senders once
    await withinBudget('GET /v1/messages', () =>
      messaging.call('GET', '/v1/messages', { ...as, query: { conversation_id: conv, limit: 10 } }),
    );
    await withinBudget('GET /v1/messages/{id}', () => messaging.call('GET', `/v1/messages/${msg}`, as));
    await withinBudget('PUT /v1/messages/{id}', () => messaging.call('PUT', `/v1/messages/${msg}`, { ...as, form: { message: 'edited' } }));
    // In a group's thread the change also needs the caller's current membership: read in the same BatchGet, no extra call.
    const group = await messaging.call('POST', '/v1/conversations', { ...as, form: { group_id: t.groupId } });
    const inGroup = await messaging.call('POST', '/v1/messages', { ...as, form: { conversation_id: group.body.id, message: 'team' } });
    await withinBudget('PUT /v1/messages/{id}', () =>
      messaging.call('PUT', `/v1/messages/${inGroup.body.id}`, { token: t.token2, form: { 'reactions[thumbsup][]': t.contactIds.bob! } }),
    );
    await withinBudget('DELETE /v1/messages/{id}', () => messaging.call('DELETE', `/v1/messages/${msg}`, as));
    // A file's first read after its upload finds the object and records it (the most a file read costs).
    const file = await withinBudget('POST /v1/files', () =>
      messaging.call('POST', '/v1/files', { ...as, form: { name: 'a.txt', content_type: 'text/plain', size: 2 } }),
    );
    await fetch(file.body.upload.url, { method: 'PUT', headers: file.body.upload.headers, body: 'hi' });
    await withinBudget('GET /v1/files/{id}', () => messaging.call('GET', `/v1/files/${file.body.id}`, as));
    await withinBudget('DELETE /v1/conversations/{id}', () => messaging.call('DELETE', `/v1/conversations/${conv}`, as));
  });

  it('holds the email routes to their budgets', async () => {
    const as = { token: t.token };
    const created = await withinBudget('POST /api/v1/emails', () =>
      email.call('POST', '/api/v1/emails', { ...as, json: { emails: ['someone@example.com'] } }),
    );
    const id = created.body.emails[0].id as number;
    await withinBudget('GET /api/v1/emails', () => email.call('GET', '/api/v1/emails', as));
    await withinBudget('GET /api/v1/email/{id}', () => email.call('GET', `/api/v1/email/${id}`, as));
    await withinBudget('DELETE /api/v1/email/{id}', () => email.call('DELETE', `/api/v1/email/${id}`, as));
    const list = await withinBudget('POST /api/v1/emailList', () =>
      email.call('POST', '/api/v1/emailList', { ...as, json: { name: 'budget' } }),
    );
    const listId = list.body.id as number;
    await withinBudget('POST /api/v1/emailList/{id}/emails', () =>
      email.call('POST', `/api/v1/emailList/${listId}/emails`, {
        ...as,
        json: { emails: ['a@example.com', 'b@example.com', 'c@example.com'] },
      }),
    );
    // An import's first read after its upload finds the file and queues the import's job (the most an import read costs).
    const imported = await withinBudget('POST /api/v1/emailList/{id}/imports', () =>
      email.call('POST', `/api/v1/emailList/${listId}/imports`, { ...as, json: {} }),
    );
    await fetch(imported.body.upload.url, { method: 'PUT', headers: imported.body.upload.headers, body: 'email\nd@example.com\n' });
    await withinBudget('GET /api/v1/emailList/{id}/imports/{importId}', () =>
      email.call('GET', `/api/v1/emailList/${listId}/imports/${imported.body.id}`, as),
    );
    await withinBudget('GET /api/v1/emailLists', () => email.call('GET', '/api/v1/emailLists', as));
    await withinBudget('GET /api/v1/emailList/{id}', () => email.call('GET', `/api/v1/emailList/${listId}`, as));
    await withinBudget('GET /api/v1/emailList/{id}/emails', () => email.call('GET', `/api/v1/emailList/${listId}/emails`, as));
    const exported = await withinBudget('POST /api/v1/emailList/{id}/exports', () =>
      email.call('POST', `/api/v1/emailList/${listId}/exports`, { ...as, json: { deliverability: ['unknown'] } }),
    );
    await withinBudget('GET /api/v1/emailList/{id}/exports/{exportId}', () =>
      email.call('GET', `/api/v1/emailList/${listId}/exports/${exported.body.id}`, as),
    );
    await withinBudget('DELETE /api/v1/emailList/{id}', () => email.call('DELETE', `/api/v1/emailList/${listId}`, as));
  });

  it('holds the platform routes to their budgets', async () => {
    const as = { token: t.secretKey };
    const contact = await withinBudget('POST /v1/contacts', () =>
      messaging.call('POST', '/v1/contacts', { ...as, form: { username: 'budget' } }),
    );
    const ct = contact.body.id as string;
    await withinBudget('GET /v1/contacts', () => messaging.call('GET', '/v1/contacts', as));
    await withinBudget('GET /v1/contacts/{id}', () => messaging.call('GET', `/v1/contacts/${ct}`, as));
    await withinBudget('PUT /v1/contacts/{id}', () =>
      messaging.call('PUT', `/v1/contacts/${ct}`, { ...as, form: { username: 'budget2' } }),
    );
    const token = await withinBudget('POST /v1/contacts/{id}/tokens', () => messaging.call('POST', `/v1/contacts/${ct}/tokens`, as));
    await withinBudget('GET /v1/contacts/{id}/tokens', () => messaging.call('GET', `/v1/contacts/${ct}/tokens`, as));
    await withinBudget('DELETE /v1/contacts/{id}/tokens/{token_id}', () =>
      messaging.call('DELETE', `/v1/contacts/${ct}/tokens/${token.body.id}`, as),
    );
    const group = await withinBudget('POST /v1/groups', () =>
      messaging.call('POST', '/v1/groups', { ...as, json: { name: 'budget', members: [t.userContactId, t.contactIds.bob] } }),
    );
    const grp = group.body.id as string;
    await withinBudget('GET /v1/groups', () => messaging.call('GET', '/v1/groups', as));
    await withinBudget('GET /v1/groups/{id}', () => messaging.call('GET', `/v1/groups/${grp}`, as));
    await withinBudget('PUT /v1/groups/{id}', () => messaging.call('PUT', `/v1/groups/${grp}`, { ...as, form: { name: 'renamed' } }));
    await withinBudget('POST /v1/groups/{id}/members', () =>
      messaging.call('POST', `/v1/groups/${grp}/members`, { ...as, form: { contact_id: ct } }),
    );
    await withinBudget('GET /v1/groups/{id}/members', () => messaging.call('GET', `/v1/groups/${grp}/members`, as));
    await withinBudget('DELETE /v1/groups/{id}/members/{contact_id}', () =>
      messaging.call('DELETE', `/v1/groups/${grp}/members/${ct}`, as),
    );
    await withinBudget('DELETE /v1/groups/{id}', () => messaging.call('DELETE', `/v1/groups/${grp}`, as));
    // A contact with a token, a group and a conversation: what its delete removes
    await messaging.call('POST', `/v1/contacts/${ct}/tokens`, as);
    await messaging.call('POST', '/v1/groups', { ...as, json: { name: 'with', members: [ct] } });
    await withinBudget('DELETE /v1/contacts/{id}', () => messaging.call('DELETE', `/v1/contacts/${ct}`, as));
    const hook = await withinBudget('POST /v1/webhook_endpoints', () =>
      messaging.call('POST', '/v1/webhook_endpoints', { ...as, form: { url: 'http://127.0.0.1:9/budget' } }),
    );
    const whk = hook.body.id as string;
    await withinBudget('GET /v1/webhook_endpoints', () => messaging.call('GET', '/v1/webhook_endpoints', as));
    await withinBudget('GET /v1/webhook_endpoints/{id}', () => messaging.call('GET', `/v1/webhook_endpoints/${whk}`, as));
    await withinBudget('PUT /v1/webhook_endpoints/{id}', () =>
      messaging.call('PUT', `/v1/webhook_endpoints/${whk}`, { ...as, json: { enabled_events: ['message.created'] } }),
    );
    await withinBudget('POST /v1/webhook_endpoints/{id}/rotate_secret', () =>
      messaging.call('POST', `/v1/webhook_endpoints/${whk}/rotate_secret`, as),
    );
    await withinBudget('DELETE /v1/webhook_endpoints/{id}', () => messaging.call('DELETE', `/v1/webhook_endpoints/${whk}`, as));
    await withinBudget('GET /v1/account', () => messaging.call('GET', '/v1/account', as));
    await withinBudget('GET /v1/events', () => messaging.call('GET', '/v1/events', as));
    await withinBudget('GET /api/v1/account', () => email.call('GET', '/api/v1/account', as));
  });

  it('refuses a malformed token without a single call (API Gateway validates the header before any authorizer)', async () => {
    for (const authorization of ['Bearer x', `Basic ${t.token}`, `Bearer ${t.token}!`]) {
      const { result, calls } = await countRoundTrips(() =>
        messaging.call('GET', '/v1/conversations', { headers: { Authorization: authorization } }),
      );
      expect(result.status, authorization).toBe(401);
      expect(calls, authorization).toEqual({});
    }
  });
});

/** `| GET /v1/messages | 3 | GetItem 1, Query 1, BatchGetItem 1 | – |`, as in docs/performance.md. */
export function budgetRow(route: string, budget: Budget): string {
  const of = (service: string) =>
    Object.entries(budget)
      .filter(([command]) => command.startsWith(`${service}.`))
      .map(([command, n]) => `${command.slice(service.length + 1)} ${n}`)
      .join(', ') || '–';
  const total = Object.values(budget).reduce((a, b) => a + b, 0);
  return `| \`${route}\` | ${total} | ${of('DynamoDB')} | ${of('SQS')} |`;
}
