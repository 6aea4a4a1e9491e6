import { describe, expect, it } from 'vitest';
import { assertMatchesOpenApi, schemaValidator } from '../steps/openapi.ts';

/**
 * The events of docs/openapi.yaml: a user's view (realtime frames, a user
 * token's feed) and the account's (webhooks, a secret key's feed), as
 * shared/stream/users.ts and shared/stream/account.ts make them.
 */
const ulid = '01JD5R8Z9Q4W3X2V1T0S9R8Q7P';
const base = { id: `evt_${ulid}`, created_at: 1_735_689_700, user: `ct_${ulid}` };

const message = (conversationId: string | null) => ({
  id: `msg_${ulid}`,
  conversation_id: conversationId,
  contact: {
    id: `ct_${ulid}`,
    username: 'alice',
    phone_number: null,
    avatar_url: null,
    last_active_at: 1_735_689_700,
    created_at: 1_735_689_000,
  },
  message: 'Hello',
  reactions: [],
  attachments: [],
  read_at: null,
  created_at: 1_735_689_700,
  updated_at: null,
});

const conversation = {
  id: `conv_${ulid}`,
  contact_id: `ct_${ulid}`,
  group_id: null,
  pinned_message_id: null,
  is_pinned: false,
  is_muted: false,
  last_active_at: 1_735_689_700,
  last_opened_at: null,
  created_at: 1_735_689_600,
  archived_at: null,
  unread_count: 1,
};

const emailList = {
  id: 18,
  name: 'Leads',
  description: null,
  email_count: 1,
  rejected_count: 0,
  status: 'completed',
  progress: { pending: 0, insufficient_credits: 0, finished: 1 },
};

const events = {
  conversationUpdated: { ...base, type: 'conversation.updated', data: { object: conversation } },
  messageCreated: { ...base, type: 'message.created', data: { object: message(`conv_${ulid}`) } },
  userMessageDeleted: {
    ...base,
    type: 'message.deleted',
    data: { object: { id: `msg_${ulid}`, conversation_id: `conv_${ulid}`, deleted: true } },
  },
  messageRead: { ...base, type: 'message.read', data: { object: message(`conv_${ulid}`), reader: `ct_${ulid}`, read_at: 1_735_689_800 } },
  accountMessageDeleted: { ...base, type: 'message.deleted', data: { object: message(null) } },
  emailListCompleted: { id: `evt_${ulid}`, type: 'email_list.completed', created_at: 1_735_689_900, data: { object: emailList } },
};

const valid = (schema: string) => {
  const validate = schemaValidator(schema);
  return (name: keyof typeof events) => validate(events[name]);
};

describe('the event schemas', () => {
  it("take each view's events, and only those", () => {
    const user = valid('UserEvent');
    const account = valid('AccountEvent');
    // A conversation's event is the same object in both views
    expect([user('conversationUpdated'), account('conversationUpdated')]).toEqual([true, true]);
    // A message's event in a user's view has that user's conversation; message.read and the short delete are theirs only
    expect([user('messageCreated'), user('userMessageDeleted'), user('messageRead')]).toEqual([true, true, true]);
    expect([account('userMessageDeleted'), account('messageRead')]).toEqual([false, false]);
    // The account sees a message as its sender does, deleted ones whole, with no conversation once the sender's is gone
    expect([account('messageCreated'), account('accountMessageDeleted')]).toEqual([true, true]);
    expect(user('accountMessageDeleted')).toBe(false);
    // Email lists are the account's alone
    expect([account('emailListCompleted'), user('emailListCompleted')]).toEqual([true, false]);
  });

  it('make the feed a list of either view, and refuse what is neither', () => {
    const page = (data: unknown[]) => () => assertMatchesOpenApi('GET', '/v1/events?after=evt_x&limit=7', 200, { has_more: true, data });
    expect(page(Object.values(events))).not.toThrow();
    expect(page([])).not.toThrow();
    expect(page([{ ...events.messageCreated, type: 'message.sent' }])).toThrow(/anyOf/);
    expect(page([{ ...events.emailListCompleted, id: 'msg_1' }])).toThrow(/anyOf/);
    const { created_at: _, ...undated } = events.conversationUpdated;
    expect(page([undated])).toThrow(/anyOf/);
  });

  it('document the refusals of a cursor: 400 and 410 on the feed, an error frame on the socket', () => {
    const refusal = (code: string) => ({ error: { type: 'invalid_request_error', code, message: 'x', param: 'after' } });
    expect(() => assertMatchesOpenApi('GET', '/v1/events?after=evt_x', 400, refusal('invalid_cursor'))).not.toThrow();
    expect(() => assertMatchesOpenApi('GET', '/v1/events?after=evt_x', 410, refusal('cursor_expired'))).not.toThrow();
    expect(() => assertMatchesOpenApi('GET', '/v1/events?after=evt_x', 410, refusal('invalid_cursor'))).toThrow(/code/);
    const frame = schemaValidator('RealtimeFrame');
    expect(frame({ type: 'error', ...refusal('cursor_expired') })).toBe(true);
    expect(frame({ type: 'error', ...refusal('invalid_cursor') })).toBe(true);
    expect(frame(events.messageRead)).toBe(true);
    expect(frame(events.emailListCompleted)).toBe(false);
  });
});
