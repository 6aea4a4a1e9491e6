import { describe, expect, it } from 'vitest';
import { routes } from '#shared/routes';
import {
  allResponses,
  assertMatchesOpenApi,
  compileResponseSchema,
  documentedStatuses,
  openApiDocument,
  operations,
  schemaValidator,
} from '../steps/openapi.ts';

const ulid = '01JD5R8Z9Q4W3X2V1T0S9R8Q7P';

const conversation = () => ({
  id: `conv_${ulid}`,
  contact_id: `ct_${ulid}`,
  group_id: null,
  pinned_message_id: null,
  is_pinned: false,
  is_muted: false,
  last_active_at: null,
  last_opened_at: null,
  created_at: 1_735_689_600,
  archived_at: null,
});

const message = () => ({
  id: `msg_${ulid}`,
  conversation_id: `conv_${ulid}`,
  contact: {
    id: `ct_${ulid}`,
    username: 'alice',
    phone_number: null,
    avatar_url: 'https://example.com/alice.png',
    last_active_at: 1_735_689_700,
    created_at: 1_735_689_000,
  },
  message: 'Hello',
  reactions: [{ thumbsup: ['alice', 'bob'] }, { '❤️': ['carol'] }],
  attachments: [
    { id: `att_${ulid}`, type: 'image', url: 'https://example.com/cat.png', name: null, mime_type: 'image/png', size: 48213 },
  ],
  read_at: null,
  created_at: 1_735_689_700,
  updated_at: null,
});

const notFound = () => ({
  error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such message: 'msg_${ulid}'`, param: 'id' },
});

const key = (method: string, path: string) => `${method} ${path}`;

describe('docs/openapi.yaml', () => {
  const doc = openApiDocument();

  it('parses and is OpenAPI 3.1', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info).toMatchObject({ title: expect.any(String), version: expect.any(String) });
    expect(doc.security).toEqual([{ bearer: [] }]);
    expect((doc.components as { securitySchemes: unknown }).securitySchemes).toMatchObject({
      bearer: { type: 'http', scheme: 'bearer' },
    });
  });

  it('has exactly the operations of the chat route table', () => {
    const fromRoutes = routes.filter((r) => r.api === 'chat').map((r) => key(r.method, r.path));
    const fromDoc = operations().map((o) => key(o.method, o.pathTemplate));
    expect([...fromDoc].sort()).toEqual([...fromRoutes].sort());
    expect(new Set(fromDoc).size).toBe(fromDoc.length);
  });

  it('gives every operation an operationId, 400, 401, 500 and a success response', () => {
    const ids = operations().map((o) => o.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const op of operations()) {
      const statuses = documentedStatuses(op.method, op.pathTemplate);
      expect(statuses, key(op.method, op.pathTemplate)).toEqual(expect.arrayContaining([400, 401, 500]));
      expect(statuses.some((s) => s >= 200 && s < 300), key(op.method, op.pathTemplate)).toBe(true);
    }
  });

  it('documents the status codes the handlers answer', () => {
    expect(documentedStatuses('POST', '/v1/conversations')).toEqual(expect.arrayContaining([200, 201, 404]));
    expect(documentedStatuses('POST', '/v1/messages')).toEqual(expect.arrayContaining([201, 404, 409, 413, 415, 422]));
    expect(documentedStatuses('POST', '/v1/messages')).not.toContain(200);
    expect(documentedStatuses('PUT', '/v1/messages/{id}')).toEqual(expect.arrayContaining([200, 404, 409]));
    expect(documentedStatuses('GET', '/v1/conversations')).not.toContain(404);
  });

  it('declares X-Request-Id on every response, and WWW-Authenticate on 401', () => {
    for (const { where, status, response } of allResponses()) {
      const headers = (response.headers ?? {}) as Record<string, unknown>;
      expect(headers, `${where} ${status}`).toHaveProperty('X-Request-Id');
      if (status === '401') expect(headers, `${where} ${status}`).toHaveProperty('WWW-Authenticate');
      if (status === '405') expect(headers, `${where} ${status}`).toHaveProperty('Allow');
    }
  });

  it('compiles every response schema and keeps its own examples valid', () => {
    for (const op of operations()) {
      for (const status of Object.keys(op.responses)) compileResponseSchema(op.method, op.pathTemplate, status);
    }
    const schemas = (doc.components as { schemas: Record<string, { examples?: unknown[] }> }).schemas;
    for (const [name, schema] of Object.entries(schemas)) {
      for (const example of schema.examples ?? []) {
        const validate = schemaValidator(name);
        expect(validate(example), `${name}: ${JSON.stringify(validate.errors)}`).toBe(true);
      }
    }
  });

  it('makes every response schema exact: additionalProperties false, every property required', () => {
    const schemas = (doc.components as { schemas: Record<string, Record<string, unknown>> }).schemas;
    for (const name of ['Conversation', 'Message', 'Contact', 'Attachment', 'ConversationList', 'MessageList', 'Deleted', 'Error']) {
      const schema = schemas[name]!;
      expect(schema.additionalProperties, name).toBe(false);
      const properties = Object.keys(schema.properties as object);
      const required = name === 'Error' ? properties : (schema.required as string[]);
      expect([...required].sort(), name).toEqual([...properties].sort());
    }
    expect(schemas.Reaction).toBeDefined();
  });
});

describe('assertMatchesOpenApi', () => {
  it('accepts valid bodies', () => {
    expect(() => assertMatchesOpenApi('GET', `/v1/conversations/conv_${ulid}`, 200, conversation())).not.toThrow();
    expect(() => assertMatchesOpenApi('POST', '/v1/conversations', 201, conversation())).not.toThrow();
    expect(() =>
      assertMatchesOpenApi('GET', '/v1/conversations?limit=2&muted=true', 200, { has_more: true, data: [conversation()] }),
    ).not.toThrow();
    expect(() => assertMatchesOpenApi('POST', '/v1/messages', 201, message())).not.toThrow();
    expect(() => assertMatchesOpenApi('get', `/v1/messages/msg_${ulid}/`, 200, message())).not.toThrow();
    expect(() => assertMatchesOpenApi('GET', '/v1/messages', 200, { has_more: false, data: [message()] })).not.toThrow();
    expect(() => assertMatchesOpenApi('DELETE', `/v1/messages/msg_${ulid}`, 200, { id: `msg_${ulid}`, deleted: true })).not.toThrow();
    expect(() => assertMatchesOpenApi('PUT', `/v1/messages/msg_${ulid}`, 404, notFound())).not.toThrow();
    expect(() =>
      assertMatchesOpenApi('GET', '/v1/messages', 401, {
        error: { type: 'authentication_error', code: 'unauthorized', message: 'Invalid or missing bearer token' },
      }),
    ).not.toThrow();
    expect(() =>
      assertMatchesOpenApi('GET', '/v1/messages', 502, {
        error: { type: 'api_error', code: 'internal_error', message: 'An internal error occurred' },
      }),
    ).not.toThrow();
  });

  it('checks unmatched requests against x-fallback-responses', () => {
    const routeMissing = { error: { type: 'invalid_request_error', code: 'route_not_found', message: 'Unrecognized request URL' } };
    const notAllowed = { error: { type: 'invalid_request_error', code: 'method_not_allowed', message: 'Method PATCH is not allowed' } };
    expect(() => assertMatchesOpenApi('GET', '/v1/nope', 404, routeMissing)).not.toThrow();
    expect(() => assertMatchesOpenApi('PATCH', `/v1/messages/msg_${ulid}`, 405, notAllowed)).not.toThrow();
    expect(() => assertMatchesOpenApi('PATCH', '/v1/messages', 404, routeMissing)).toThrow(/status 404 is not documented/);
    expect(() => assertMatchesOpenApi('GET', '/v1/nope', 404, notAllowed)).toThrow(/does not match/);
  });

  it('rejects a body with a missing field', () => {
    const { archived_at: _, ...body } = conversation();
    expect(() => assertMatchesOpenApi('GET', `/v1/conversations/conv_${ulid}`, 200, body)).toThrow(
      /getConversation[\s\S]*archived_at/,
    );
    const { contact: __, ...noContact } = message();
    expect(() => assertMatchesOpenApi('POST', '/v1/messages', 201, noContact)).toThrow(/sendMessage/);
    expect(() => assertMatchesOpenApi('GET', '/v1/messages', 404, { error: { type: 'invalid_request_error', code: 'resource_missing' } })).toThrow(
      /message/,
    );
  });

  it('rejects a body with an extra field', () => {
    expect(() => assertMatchesOpenApi('GET', `/v1/conversations/conv_${ulid}`, 200, { ...conversation(), account_id: 'acct_x' })).toThrow(
      /additional/,
    );
    const extraNested = message();
    (extraNested.contact as Record<string, unknown>).account_id = 'acct_x';
    expect(() => assertMatchesOpenApi('GET', `/v1/messages/msg_${ulid}`, 200, extraNested)).toThrow(/\/contact/);
    expect(() => assertMatchesOpenApi('GET', '/v1/messages', 404, { error: { ...notFound().error, stack: 'Error at ...' } })).toThrow(
      /additional/,
    );
  });

  it('rejects a body with a wrong type', () => {
    expect(() => assertMatchesOpenApi('GET', `/v1/conversations/conv_${ulid}`, 200, { ...conversation(), is_muted: 'false' })).toThrow(
      /is_muted/,
    );
    expect(() => assertMatchesOpenApi('GET', `/v1/messages/msg_${ulid}`, 200, { ...message(), created_at: 1_735_689_700.5 })).toThrow(
      /created_at/,
    );
    expect(() => assertMatchesOpenApi('GET', `/v1/messages/msg_${ulid}`, 200, { ...message(), reactions: { thumbsup: ['alice'] } })).toThrow(
      /reactions/,
    );
    expect(() => assertMatchesOpenApi('GET', '/v1/messages', 200, { has_more: 'no', data: [] })).toThrow(/has_more/);
    expect(() => assertMatchesOpenApi('DELETE', `/v1/messages/msg_${ulid}`, 200, { id: `msg_${ulid}`, deleted: 'true' })).toThrow(
      /deleted/,
    );
  });

  it('rejects values the schema forbids', () => {
    const both = { ...conversation(), group_id: `grp_${ulid}` };
    expect(() => assertMatchesOpenApi('GET', `/v1/conversations/conv_${ulid}`, 200, both)).toThrow(/oneOf/);
    expect(() => assertMatchesOpenApi('GET', `/v1/conversations/conv_${ulid}`, 200, { ...conversation(), id: 'msg_1' })).toThrow(/pattern/);
    const wrongErrorType = { error: { ...notFound().error, type: 'api_error' } };
    expect(() => assertMatchesOpenApi('GET', `/v1/messages/msg_${ulid}`, 404, wrongErrorType)).toThrow(/type/);
    expect(() => assertMatchesOpenApi('GET', `/v1/messages/msg_${ulid}`, 200, { ...message(), reactions: [{}] })).toThrow(/reactions/);
  });

  it('rejects a status the operation does not document', () => {
    expect(() => assertMatchesOpenApi('GET', `/v1/conversations/conv_${ulid}`, 201, conversation())).toThrow(
      /status 201 is not documented for getConversation/,
    );
    expect(() => assertMatchesOpenApi('GET', '/v1/conversations', 404, notFound())).toThrow(/not documented/);
    expect(() => assertMatchesOpenApi('POST', '/v1/messages', 200, message())).toThrow(/not documented/);
  });
});
