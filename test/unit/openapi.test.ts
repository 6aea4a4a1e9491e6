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
  unread_count: 0,
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
    {
      id: `att_${ulid}`,
      type: 'image',
      url: 'https://example.com/cat.png',
      name: null,
      mime_type: 'image/png',
      size: 48213,
      file_id: null,
    },
  ],
  read_at: null,
  created_at: 1_735_689_700,
  updated_at: null,
});

const notFound = () => ({
  error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such message: 'msg_${ulid}'`, param: 'id' },
});

const email = (overrides: Record<string, unknown> = {}) => ({
  id: 1042,
  email: 'Jane.Doe+news@Example.com',
  is_valid: true,
  score: 85,
  can_connect: true,
  mx_record_count: 2,
  connectable_mx_record_count: 2,
  is_username_generic: false,
  is_alias: true,
  is_gov: false,
  is_edu: false,
  is_mil: false,
  is_free: false,
  is_subdomain: false,
  canonical_email: 'Jane.Doe@example.com',
  is_disposable: false,
  did_you_mean: null,
  is_catch_all: null,
  deliverability: 'unknown',
  status: 'completed',
  ...overrides,
});

/** An email as answered before it is completed: no score, validation fields false / 0. */
const pendingEmail = (overrides: Record<string, unknown> = {}) => {
  const { score: _, ...rest } = email({
    email: 'someone@example.org',
    canonical_email: 'someone@example.org',
    is_valid: false,
    can_connect: false,
    mx_record_count: 0,
    connectable_mx_record_count: 0,
    is_alias: false,
    status: 'pending',
  });
  return { ...rest, ...overrides };
};

const emailList = (overrides: Record<string, unknown> = {}) => ({
  id: 17,
  name: 'Leads',
  description: null,
  email_count: 3,
  rejected_count: 2,
  status: 'processing',
  progress: { pending: 2, insufficient_credits: 0, finished: 1 },
  ...overrides,
});

const emailNotFound = () => ({
  error: { type: 'invalid_request_error', code: 'resource_missing', message: "No such email: '1042'", param: 'id' },
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

  it('has exactly the operations of the route table, both APIs', () => {
    expect(new Set(routes.map((r) => r.api))).toEqual(new Set(['messaging', 'email']));
    const fromRoutes = routes.map((r) => key(r.method, r.path));
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
      expect(
        statuses.some((s) => s >= 200 && s < 300),
        key(op.method, op.pathTemplate),
      ).toBe(true);
    }
  });

  it('documents the status codes the handlers answer', () => {
    expect(documentedStatuses('POST', '/v1/conversations')).toEqual(expect.arrayContaining([200, 201, 404]));
    expect(documentedStatuses('POST', '/v1/messages')).toEqual(expect.arrayContaining([201, 404, 409, 413, 415, 422]));
    expect(documentedStatuses('POST', '/v1/messages')).not.toContain(200);
    expect(documentedStatuses('PUT', '/v1/messages/{id}')).toEqual(expect.arrayContaining([200, 404, 409]));
    expect(documentedStatuses('GET', '/v1/conversations')).not.toContain(404);

    expect(documentedStatuses('POST', '/api/v1/emails')).toEqual(expect.arrayContaining([201, 400, 401, 413, 415, 429]));
    expect(documentedStatuses('POST', '/api/v1/emails')).not.toContain(200);
    expect(documentedStatuses('POST', '/api/v1/emailList')).toEqual(expect.arrayContaining([201, 400, 415]));
    expect(documentedStatuses('POST', '/api/v1/emailList/{id}/emails')).toEqual(expect.arrayContaining([201, 400, 404, 415]));
    expect(documentedStatuses('POST', '/api/v1/emailList/{id}/emails')).not.toContain(200);
    for (const path of ['/api/v1/email/{id}', '/api/v1/emailList/{id}']) {
      expect(documentedStatuses('GET', path)).toEqual(expect.arrayContaining([200, 404]));
      expect(documentedStatuses('DELETE', path)).toEqual(expect.arrayContaining([200, 404]));
    }
    expect(documentedStatuses('GET', '/api/v1/emails')).not.toContain(404);
    expect(documentedStatuses('GET', '/api/v1/emailLists')).not.toContain(404);
  });

  it('gives the email validation API its own servers and tags', () => {
    const paths = doc.paths as Record<string, { servers?: { url: string }[] }>;
    for (const route of routes) {
      const servers = paths[route.path]?.servers?.map((s) => s.url);
      if (route.api === 'email') {
        expect(servers, route.path).toEqual(['http://127.0.0.1:3001', 'https://{restApiId}.execute-api.{region}.amazonaws.com/prod']);
      } else {
        expect(servers, route.path).toBeUndefined();
      }
    }
    expect((doc.servers as { url: string }[])[0]!.url).toBe('http://127.0.0.1:3000');
    const emailTags = new Set(
      operations()
        .filter((o) => o.pathTemplate.startsWith('/api/'))
        .flatMap((o) => {
          const item = (doc.paths as Record<string, Record<string, { tags: string[] }>>)[o.pathTemplate]!;
          return item[o.method.toLowerCase()]!.tags;
        }),
    );
    expect(emailTags).toEqual(new Set(['Emails', 'Email lists']));
    expect((doc.tags as { name: string }[]).map((t) => t.name)).toEqual(expect.arrayContaining(['Emails', 'Email lists']));
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
    /** Properties that are documented as sometimes absent. */
    const optional: Record<string, string[]> = { Email: ['email_list_id', 'score'], Error: [] };
    const exact = [
      ...['Conversation', 'Message', 'Contact', 'Attachment', 'ConversationList', 'MessageList', 'Deleted', 'Error'],
      ...['Email', 'EmailEntryError', 'EmailList', 'EmailPage', 'EmailListPage', 'AddEmailsResult', 'CreateEmailsResult'],
    ];
    for (const name of exact) {
      const schema = schemas[name]!;
      expect(schema.additionalProperties, name).toBe(false);
      const properties = Object.keys(schema.properties as object);
      const required = name === 'Error' ? properties : (schema.required as string[]);
      const always = properties.filter((p) => !(optional[name] ?? []).includes(p));
      expect([...required].sort(), name).toEqual(always.sort());
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
    expect(() => assertMatchesOpenApi('GET', `/v1/conversations/conv_${ulid}`, 200, body)).toThrow(/getConversation[\s\S]*archived_at/);
    const { contact: __, ...noContact } = message();
    expect(() => assertMatchesOpenApi('POST', '/v1/messages', 201, noContact)).toThrow(/sendMessage/);
    expect(() =>
      assertMatchesOpenApi('GET', '/v1/messages', 404, { error: { type: 'invalid_request_error', code: 'resource_missing' } }),
    ).toThrow(/message/);
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
    expect(() =>
      assertMatchesOpenApi('GET', `/v1/messages/msg_${ulid}`, 200, { ...message(), reactions: { thumbsup: ['alice'] } }),
    ).toThrow(/reactions/);
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

/**
 * The schema errors of a failed check, without the echoed body (which would
 * match any field name); '' when the body is valid.
 */
const violation = (method: string, path: string, status: number, body: unknown): string => {
  try {
    assertMatchesOpenApi(method, path, status, body);
  } catch (error) {
    return (error as Error).message.split('\nbody:')[0]!;
  }
  return '';
};

describe('assertMatchesOpenApi on the email validation API', () => {
  const entryError = () => ({ email: 'not an email', error: 'missing @' });
  const listPage = () => ({
    emailLists: [emailList(), emailList({ id: 18, description: 'From the fair', status: 'completed' })],
    page: 1,
    totalPages: 1,
  });

  it('accepts valid emails, error entries and pages', () => {
    expect(violation('GET', '/api/v1/email/1042', 200, email())).toBe('');
    expect(violation('GET', '/api/v1/email/1042', 200, pendingEmail({ email_list_id: 17 }))).toBe('');
    expect(violation('GET', '/api/v1/email/1042', 200, pendingEmail({ status: 'error' }))).toBe('');
    const created = {
      emails: [email(), entryError(), { email: 42, error: 'must be a string' }, { email: null, error: 'must be a string' }, pendingEmail()],
    };
    expect(violation('POST', '/api/v1/emails', 201, created)).toBe('');
    const added = { emailList: emailList(), emails: [pendingEmail({ email_list_id: 17 }), { email: 'A@example.com', error: 'duplicate' }] };
    expect(violation('POST', '/api/v1/emailList/17/emails', 201, added)).toBe('');
    expect(violation('GET', '/api/v1/emails?page=1', 200, { emails: [], page: 1, totalPages: 1 })).toBe('');
    expect(violation('GET', '/api/v1/emails', 200, { emails: [email()], page: 2, totalPages: 3 })).toBe('');
    expect(violation('GET', '/api/v1/emailList/17/emails', 200, { emails: [email({ email_list_id: 17 })], page: 1, totalPages: 1 })).toBe(
      '',
    );
    expect(violation('GET', '/api/v1/emailLists', 200, listPage())).toBe('');
    expect(violation('POST', '/api/v1/emailList', 201, emailList({ status: 'completed' }))).toBe('');
    expect(violation('GET', '/api/v1/emailList/17', 200, emailList({ status: 'insufficient_credits' }))).toBe('');
    expect(violation('DELETE', '/api/v1/email/1042', 200, { id: 1042, deleted: true })).toBe('');
    expect(violation('DELETE', '/api/v1/emailList/17', 200, { id: 17, deleted: true })).toBe('');
    expect(violation('GET', '/api/v1/email/abc', 404, emailNotFound())).toBe('');
    const outOfRange = {
      error: { type: 'invalid_request_error', code: 'page_out_of_range', message: 'page 3 does not exist', param: 'page' },
    };
    expect(violation('GET', '/api/v1/emailLists?page=3', 400, outOfRange)).toBe('');
    const unsupported = {
      error: { type: 'invalid_request_error', code: 'unsupported_media_type', message: 'Content-Type must be application/json' },
    };
    expect(violation('POST', '/api/v1/emails', 415, unsupported)).toBe('');
    const routeMissing = { error: { type: 'invalid_request_error', code: 'route_not_found', message: 'Unrecognized request URL' } };
    expect(violation('GET', '/api/v1/nope', 404, routeMissing)).toBe('');
    const notAllowed = { error: { type: 'invalid_request_error', code: 'method_not_allowed', message: 'Method PUT is not allowed' } };
    expect(violation('PUT', '/api/v1/emailList/17', 405, notAllowed)).toBe('');
  });

  it('rejects an invalid email', () => {
    const get = (body: unknown) => violation('GET', '/api/v1/email/1042', 200, body);
    const { status: _, ...noStatus } = email();
    expect(get(noStatus)).toMatch(/getEmail[\s\S]*required.*"status"/);
    expect(get({ ...email(), id: '1042' })).toMatch(/\/id must be integer/);
    expect(get({ ...email(), id: 0 })).toMatch(/\/id must be >= 1/);
    expect(get({ ...email(), score: 101 })).toMatch(/\/score must be <= 100/);
    expect(get({ ...email(), status: 'done' })).toMatch(/\/status must be equal to one of the allowed values/);
    expect(get({ ...email(), account_id: 'acct_x' })).toMatch(/additional.*account_id/);
    expect(get({ ...email(), email_list_id: null })).toMatch(/\/email_list_id must be integer/);
    // score: always present when completed, never before.
    const { score: __, ...completedWithoutScore } = email();
    expect(get(completedWithoutScore)).toMatch(/required.*"score"/);
    expect(get({ ...pendingEmail(), score: 0 })).toMatch(/\/score boolean schema is false/);
    expect(get(pendingEmail({ is_valid: true }))).toMatch(/\/is_valid must be equal to constant/);
    // Standalone emails have no email_list_id; the emails of a list always have it.
    expect(violation('GET', '/api/v1/emails', 200, { emails: [email({ email_list_id: 17 })], page: 1, totalPages: 1 })).toMatch(
      /\/emails\/0\/email_list_id boolean schema is false/,
    );
    expect(violation('GET', '/api/v1/emailList/17/emails', 200, { emails: [email()], page: 1, totalPages: 1 })).toMatch(
      /\/emails\/0 must have required property 'email_list_id'/,
    );
    expect(violation('POST', '/api/v1/emails', 201, { emails: [email({ email_list_id: 17 })] })).toMatch(
      /\/emails\/0 must match exactly one schema in oneOf/,
    );
  });

  it('rejects an invalid error entry', () => {
    const create = (entry: unknown) => violation('POST', '/api/v1/emails', 201, { emails: [entry] });
    expect(create(entryError())).toBe('');
    expect(create({ error: 'missing @' })).toMatch(/required.*"email"/);
    expect(create({ email: 'x', error: '' })).toMatch(/\/emails\/0\/error must NOT have fewer than 1 characters/);
    expect(create({ email: 'x', error: 5 })).toMatch(/\/emails\/0\/error must be string/);
    expect(create({ email: 'x', error: 'missing @', id: 1 })).toMatch(/additional.*"id"/);
    expect(violation('POST', '/api/v1/emails', 201, { emails: [] })).toMatch(/\/emails must NOT have fewer than 1 items/);
  });

  it('rejects an invalid list page', () => {
    const list = (body: unknown) => violation('GET', '/api/v1/emailLists', 200, body);
    const { totalPages: _, ...noTotal } = listPage();
    expect(list(noTotal)).toMatch(/required.*"totalPages"/);
    expect(list({ ...listPage(), page: 0 })).toMatch(/\/page must be >= 1/);
    expect(list({ ...listPage(), page: '1' })).toMatch(/\/page must be integer/);
    expect(list({ ...listPage(), has_more: false })).toMatch(/additional.*has_more/);
    expect(list({ emails: [], page: 1, totalPages: 1 })).toMatch(/required.*"emailLists"/);
    expect(list({ ...listPage(), emailLists: [emailList({ status: 'done' })] })).toMatch(/\/emailLists\/0\/status/);
    const { description: __, ...noDescription } = emailList();
    expect(list({ ...listPage(), emailLists: [noDescription] })).toMatch(/\/emailLists\/0 must have required property 'description'/);
    expect(list({ ...listPage(), emailLists: [emailList({ name: '   ' })] })).toMatch(/\/emailLists\/0\/name must match pattern/);
    const tooMany = Array.from({ length: 101 }, (_, i) => emailList({ id: i + 1 }));
    expect(list({ ...listPage(), emailLists: tooMany })).toMatch(/\/emailLists must NOT have more than 100 items/);
  });

  it('keeps the delete ids of the two APIs apart', () => {
    expect(violation('DELETE', '/api/v1/email/1042', 200, { id: '1042', deleted: true })).toMatch(/\/id must be integer/);
    expect(violation('DELETE', '/api/v1/emailList/17', 200, { id: 0, deleted: true })).toMatch(/\/id must be >= 1/);
    expect(violation('DELETE', `/v1/messages/msg_${ulid}`, 200, { id: 1042, deleted: true })).toMatch(/\/id must be string/);
    expect(violation('DELETE', `/v1/conversations/conv_${ulid}`, 200, { id: `msg_${ulid}`, deleted: true })).toMatch(
      /\/id must match pattern/,
    );
  });

  it('rejects statuses and errors the email operations do not answer', () => {
    expect(violation('POST', '/api/v1/emails', 200, { emails: [email()] })).toMatch(/status 200 is not documented for createEmails/);
    expect(violation('POST', '/api/v1/emailList/17/emails', 200, {})).toMatch(/status 200 is not documented for addEmailsToList/);
    expect(violation('GET', '/api/v1/emails', 404, emailNotFound())).toMatch(/status 404 is not documented for listEmails/);
    const cursor = { error: { type: 'invalid_request_error', code: 'invalid_cursor', message: 'x', param: 'starting_after' } };
    expect(violation('GET', '/api/v1/emails', 400, cursor)).toMatch(/\/error\/code must be equal to one of the allowed values/);
    const wrongParam = { error: { ...emailNotFound().error, param: 'email_id' } };
    expect(violation('GET', '/api/v1/email/1042', 404, wrongParam)).toMatch(/\/error\/param must be equal to constant/);
  });
});
