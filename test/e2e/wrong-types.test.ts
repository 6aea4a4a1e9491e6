import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as v from 'valibot';
import { createExportBody, createListBody, emailsBody, pageQuery } from '#shared/http/email-schemas';
import {
  createConversationBody,
  createFileBody,
  createMessageBody,
  listConversationsQuery,
  listMessagesQuery,
  updateConversationBody,
  updateMessageBody,
} from '#shared/http/messaging-schemas';
import {
  addMemberBody,
  createContactBody,
  createGroupBody,
  createTokenBody,
  createWebhookBody,
  listQuery,
  updateContactBody,
  updateGroupBody,
  updateWebhookBody,
} from '#shared/http/platform-schemas';
import { routes, type ApiName } from '#shared/routes';
import { aTenant, type Tenant } from '../steps/given.ts';
import { apiClient, transports, type ApiClient } from '../steps/when.ts';

/**
 * Every parameter of every endpoint, each sent with values of the wrong type
 * or shape: the answer is 400 parameter_invalid naming it and saying what it
 * takes, never "missing" and never a validation library's own wording.
 */
type Where = 'json' | 'query';
interface Row {
  method: string;
  path: string;
  where: Where;
  schema: v.StrictObjectSchema<v.ObjectEntries, undefined>;
  /** Values of a wrong type or shape, per parameter. */
  wrong: Record<string, unknown[]>;
  /** What a valid request needs besides the parameter under test. */
  base?: Record<string, unknown>;
}

const notString = [123, true, ['a'], { a: 1 }];
const notBoolean = ['yes', 2, ['true'], { a: 1 }];
const notInteger = ['ten', 1.5, true, ['1'], { a: 1 }];
const id = 'id_0000000000';
const table: Row[] = [
  {
    method: 'GET',
    path: '/v1/conversations',
    where: 'query',
    schema: listConversationsQuery,
    wrong: {
      limit: ['ten', '1.5', '-1'],
      starting_after: [''],
      ending_before: [''],
      muted: ['yes'],
      archived: ['2'],
      pinned: ['maybe'],
      group_id: [''],
    },
  },
  {
    method: 'POST',
    path: '/v1/conversations',
    where: 'json',
    schema: createConversationBody,
    wrong: { contact_id: notString, group_id: notString },
  },
  {
    method: 'PUT',
    path: `/v1/conversations/${id}`,
    where: 'json',
    schema: updateConversationBody,
    wrong: {
      pinned_message_id: notString,
      is_pinned: notBoolean,
      is_muted: notBoolean,
      archived_at: ['yesterday', ...notInteger],
      opened: notBoolean,
    },
  },
  {
    method: 'GET',
    path: '/v1/messages',
    where: 'query',
    schema: listMessagesQuery,
    wrong: { limit: ['x'], starting_after: [''], ending_before: [''], conversation_id: [''] },
  },
  {
    method: 'POST',
    path: '/v1/messages',
    where: 'json',
    schema: createMessageBody,
    base: { conversation_id: id, message: 'hi' },
    wrong: { conversation_id: notString, message: notString, attachments: ['x', 5, true, { url: 'https://a.example' }, [5], [['x']]] },
  },
  {
    method: 'PUT',
    path: `/v1/messages/${id}`,
    where: 'json',
    schema: updateMessageBody,
    wrong: { message: notString, reactions: [5, true, 'x'], attachments: ['x', 5, { a: 1 }], read: notBoolean },
  },
  {
    method: 'POST',
    path: '/v1/files',
    where: 'json',
    schema: createFileBody,
    base: { name: 'a.png', content_type: 'image/png', size: 10 },
    wrong: { name: notString, content_type: notString, size: notInteger },
  },
  ...['/v1/contacts', `/v1/contacts/${id}/tokens`, '/v1/groups', `/v1/groups/${id}/members`, '/v1/webhook_endpoints'].map((path): Row => ({
    method: 'GET',
    path,
    where: 'query',
    schema: listQuery,
    wrong: { limit: ['ten', '0', '101'], starting_after: [''], ending_before: [''] },
  })),
  {
    method: 'POST',
    path: '/v1/contacts',
    where: 'json',
    schema: createContactBody,
    base: { username: 'zed' },
    wrong: { username: notString, phone_number: [...notString, '5550100', '+0123'], avatar_url: [...notString, 'http://a.example/x.png'] },
  },
  {
    method: 'PUT',
    path: `/v1/contacts/${id}`,
    where: 'json',
    schema: updateContactBody,
    wrong: { username: [...notString, ''], phone_number: notString, avatar_url: notString },
  },
  {
    method: 'POST',
    path: `/v1/contacts/${id}/tokens`,
    where: 'json',
    schema: createTokenBody,
    wrong: { expires_in: [...notInteger, 59, 31_536_001] },
  },
  {
    method: 'POST',
    path: '/v1/groups',
    where: 'json',
    schema: createGroupBody,
    base: { name: 'team' },
    wrong: { name: notString, members: ['x', 5, true, { a: 1 }, [5]] },
  },
  { method: 'PUT', path: `/v1/groups/${id}`, where: 'json', schema: updateGroupBody, wrong: { name: [...notString, ''] } },
  {
    method: 'POST',
    path: `/v1/groups/${id}/members`,
    where: 'json',
    schema: addMemberBody,
    base: { contact_id: id },
    wrong: { contact_id: notString },
  },
  {
    method: 'POST',
    path: '/v1/webhook_endpoints',
    where: 'json',
    schema: createWebhookBody,
    base: { url: 'https://hooks.example/x' },
    wrong: { url: notString, enabled_events: ['message.created', 5, true, { a: 1 }, [5], []] },
  },
  {
    method: 'PUT',
    path: `/v1/webhook_endpoints/${id}`,
    where: 'json',
    schema: updateWebhookBody,
    wrong: { url: notString, enabled_events: ['x', [5]] },
  },
  // Takes no parameters: any is unknown.
  { method: 'POST', path: `/v1/webhook_endpoints/${id}/rotate_secret`, where: 'json', schema: v.strictObject({}), wrong: {} },
  {
    method: 'POST',
    path: '/api/v1/emails',
    where: 'json',
    schema: emailsBody,
    wrong: { emails: ['a@example.com', 5, true, { a: 1 }, null] },
  },
  { method: 'GET', path: '/api/v1/emails', where: 'query', schema: pageQuery, wrong: { page: ['two', '1.5', '-1'] } },
  {
    method: 'POST',
    path: '/api/v1/emailList',
    where: 'json',
    schema: createListBody,
    base: { name: 'Leads' },
    wrong: { name: notString, description: notString },
  },
  { method: 'GET', path: '/api/v1/emailLists', where: 'query', schema: pageQuery, wrong: { page: ['x'] } },
  {
    method: 'POST',
    path: '/api/v1/emailList/1/exports',
    where: 'json',
    schema: createExportBody,
    wrong: { deliverability: ['deliverable', 5, { a: 1 }] },
  },
  { method: 'GET', path: '/api/v1/emailList/1/emails', where: 'query', schema: pageQuery, wrong: { page: ['0x1'] } },
  {
    method: 'POST',
    path: '/api/v1/emailList/1/emails',
    where: 'json',
    schema: emailsBody,
    wrong: { emails: ['a@example.com', 5, { a: 1 }] },
  },
];

const apiOf = (path: string): ApiName => (path.startsWith('/api/') ? 'email' : 'messaging');
const concrete = (path: string) => path.replace('{id}', /^\/api\//.test(path) ? '1' : id);
const rowOf = (method: string, path: string) => table.find((r) => r.method === method && r.path === concrete(path));
/** The credential the row's route takes: the secret key on the platform endpoints, else the user's token. */
const tokenFor = (row: Row, t: Tenant) =>
  routes.find((r) => r.method === row.method && concrete(r.path) === row.path)?.credential === 'secret' ? t.secretKey : t.token;

describe('the wrong-type table', () => {
  it('covers every parameter of every endpoint that takes any', () => {
    for (const route of routes) {
      const row = rowOf(route.method, route.path);
      if (!row) {
        // Routes without a row take no parameters at all: gets and deletes by id, and creating an import (a body of `{}`).
        const takesNone = route.method === 'GET' || route.method === 'DELETE' || route.path.endsWith('/imports');
        expect(takesNone, `${route.method} ${route.path}`).toBe(true);
        continue;
      }
      expect(Object.keys(row.wrong).sort(), `${route.method} ${route.path}`).toEqual(Object.keys(row.schema.entries).sort());
    }
  });
});

// In-process locally (the table is long; the HTTP layer adds nothing to validation), else against the deployment.
describe.each(transports().slice(0, 1))('wrong types over %s', (transport) => {
  const clients: Partial<Record<ApiName, ApiClient>> = {};
  let t: Tenant;
  beforeAll(async () => {
    clients.messaging = await apiClient('messaging', transport);
    clients.email = await apiClient('email', transport);
    t = await aTenant();
  });
  afterAll(async () => {
    await clients.messaging?.close();
    await clients.email?.close();
  });

  const send = (row: Row, params: Record<string, unknown>) =>
    clients[apiOf(row.path)]!.call(row.method, row.path, {
      token: tokenFor(row, t),
      ...(row.where === 'json' ? { json: { ...row.base, ...params } } : { query: params as Record<string, string> }),
    });

  const cases = table.flatMap((row) =>
    Object.entries(row.wrong).flatMap(([param, values]) =>
      values.map((value) => [`${row.method} ${row.path}`, param, JSON.stringify(value), row, value] as const),
    ),
  );

  it.each(cases)('%s: %s = %s is parameter_invalid', async (_, param, _shown, row, value) => {
    const res = await send(row, { [param]: value });
    expect(res.status, res.text).toBe(400);
    const { error } = res.body;
    expect(error.code).toBe('parameter_invalid');
    // A wrong element names the element: attachments[0].
    expect(error.param === param || error.param.startsWith(`${param}[`), error.param).toBe(true);
    expect(error.message.startsWith(`Invalid ${error.param}: must `), error.message).toBe(true);
    // Never a validation library's own wording (zod's "Invalid input", valibot's "Invalid type: Expected … but received …").
    expect(error.message).not.toMatch(/Invalid (input|type|key|length|value)|but received/);
  });

  it.each(table.filter((r) => r.base).map((r) => [`${r.method} ${r.path}`, r] as const))('%s: missing only when absent', async (_, row) => {
    for (const name of Object.keys(row.base!)) {
      const { [name]: _gone, ...rest } = row.base!;
      const res = await clients[apiOf(row.path)]!.call(row.method, row.path, { token: tokenFor(row, t), json: rest });
      expect(res.body.error).toMatchObject({ code: 'parameter_missing', param: name, message: `Missing required parameter: ${name}` });
    }
  });

  const prototypeNames = ['__proto__', 'constructor', 'prototype'];
  it.each(table.map((r) => [`${r.method} ${r.path}`, r] as const))('%s: prototype keys are unknown parameters', async (_, row) => {
    const api = clients[apiOf(row.path)]!;
    for (const name of prototypeNames) {
      const bracketed = `${name}[x]`;
      const asQuery = await api.call(row.method, row.path, { token: tokenFor(row, t), query: { [bracketed]: '1' } });
      expect(asQuery.body.error, asQuery.text).toMatchObject({ code: 'parameter_unknown', param: bracketed });
      if (row.where !== 'json') continue;
      const json = await api.call(row.method, row.path, {
        token: tokenFor(row, t),
        raw: { body: `{"${name}":{"x":1}}`, contentType: 'application/json' },
      });
      expect(json.body.error, json.text).toMatchObject({ code: 'parameter_unknown', param: name });
      if (apiOf(row.path) !== 'messaging') continue;
      const form = await api.call(row.method, row.path, {
        token: tokenFor(row, t),
        form: { [bracketed]: '1', ...(row.base as Record<string, string>) },
      });
      expect(form.body.error, form.text).toMatchObject({ code: 'parameter_unknown', param: bracketed });
    }
  });

  // Names every object has (the form parser dropped them silently, where JSON and the query refused them).
  const ownNames = ['hasOwnProperty', 'toString', 'valueOf', '__defineGetter__'];
  it.each(table.filter((r) => apiOf(r.path) === 'messaging' && r.where === 'json').map((r) => [`${r.method} ${r.path}`, r] as const))(
    "%s: names of an object's own methods are unknown parameters in a form too",
    async (_, row) => {
      for (const name of ownNames) {
        const form = await clients.messaging!.call(row.method, row.path, {
          token: tokenFor(row, t),
          form: { [name]: '1', ...(row.base as Record<string, string>) },
        });
        expect(form.body.error, form.text).toMatchObject({ code: 'parameter_unknown', param: name });
      }
    },
  );
});
