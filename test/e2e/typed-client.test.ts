import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiError,
  connectRealtime,
  createEmailClient,
  createMessagingClient,
  unwrap,
  type RealtimeConnection,
  type UserEvent,
} from '../../clients/typescript/index.ts';
import { startApiServer, type RunningApi } from '../../scripts/local/http-server.ts';
import { startRealtimeServer, type RunningRealtime } from '../../scripts/local/realtime-server.ts';
import { startStreams } from '../../scripts/local/runtime.ts';
import { eventually } from '../steps/eventually.ts';
import { aTenant } from '../steps/given.ts';
import { assertMatchesOpenApi } from '../steps/openapi.ts';

/**
 * The TypeScript client (clients/typescript) against the local service over
 * real sockets: both REST APIs through the types generated from
 * docs/openapi.yaml, and the realtime helper on the local WebSocket API.
 * Every answer the client gets is also checked against the document.
 */
let messaging: RunningApi;
let email: RunningApi;
let realtime: RunningRealtime;
let streams: { stop: () => Promise<void> };
const sockets: RealtimeConnection[] = [];

beforeAll(async () => {
  [messaging, email, realtime] = await Promise.all([startApiServer('messaging', 0), startApiServer('email', 0), startRealtimeServer(0)]);
  process.env.REALTIME_ENDPOINT = realtime.callbackUrl;
  streams = startStreams(process.env as Record<string, string>, { from: 'latest' });
});

afterAll(async () => {
  for (const socket of sockets) socket.close();
  await streams?.stop();
  await Promise.all([messaging?.close(), email?.close(), realtime?.close()]);
});

/** Every answer of the service, read without consuming it, must be one docs/openapi.yaml describes. */
const checked = <C extends { use: (middleware: { onResponse: (p: { request: Request; response: Response }) => Promise<void> }) => void }>(
  client: C,
) => {
  client.use({
    async onResponse({ request, response }) {
      assertMatchesOpenApi(request.method, request.url, response.status, await response.clone().json());
    },
  });
  return client;
};

const messagingAs = (token: string) => checked(createMessagingClient({ baseUrl: messaging.url, token }));

describe('the typed client against the local service', () => {
  it("sends a message that the recipient's realtime helper delivers live, and reads it back", async () => {
    // Given alice's and bob's clients, and bob's realtime helper connected (Node 20 has no global WebSocket: ws's is passed)
    const t = await aTenant();
    const [alice, bob] = [messagingAs(t.token), messagingAs(t.token2)];
    const heard: UserEvent[] = [];
    const before = realtime.connections();
    sockets.push(connectRealtime({ url: realtime.url, token: t.token2, WebSocket, onEvent: (e) => heard.push(e) }));
    await eventually(async () => realtime.connections() > before, { what: "bob's helper connected", timeoutMs: 5_000 });
    // When alice opens a conversation with bob and sends him a message, retry-safe with an idempotency key
    const conversation = unwrap(await alice.POST('/v1/conversations', { body: { contact_id: t.contactIds.bob! } }));
    const sent = await alice.POST('/v1/messages', {
      params: { header: { 'Idempotency-Key': `typed-client-${conversation.id}` } },
      body: { conversation_id: conversation.id, message: 'hi from the typed client' },
    });
    expect(sent.response.status).toBe(201);
    const message = unwrap(sent);
    // Then bob's helper delivers message.created, in his view, once
    const created = await eventually(async () => heard.find((e) => e.type === 'message.created'), {
      what: "the message.created at bob's helper",
      timeoutMs: 10_000,
    });
    expect(created).toMatchObject({ user: t.contactIds.bob, data: { object: { id: message.id, message: 'hi from the typed client' } } });
    expect(new Set(heard.map((e) => e.id)).size).toBe(heard.length);
    expect(sockets[0]!.lastEventId).toBe(heard.at(-1)!.id);
    // And his own conversation lists it
    const bobConversation = created.type === 'message.created' ? created.data.object.conversation_id : '';
    const page = unwrap(await bob.GET('/v1/messages', { params: { query: { conversation_id: bobConversation, limit: 5 } } }));
    expect(page.data.map((m) => m.id)).toEqual([message.id]);
  });

  it('answers errors as typed error envelopes, and unwrap throws them as ApiError', async () => {
    const t = await aTenant();
    const alice = messagingAs(t.token);
    // Given an id that names nothing, when alice reads it, then the 404 is the typed envelope
    const missing = await alice.GET('/v1/messages/{id}', { params: { path: { id: 'msg_01JD5R9A2B3C4D5E6F7G8H9J0K' } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error?.error).toMatchObject({ type: 'invalid_request_error', code: 'resource_missing', param: 'id' });
    // And a user token on a platform endpoint, unwrapped, throws the 403 with its code
    const refused = await alice
      .GET('/v1/account')
      .then(unwrap)
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ status: 403, code: 'secret_key_required' });
  });

  it("reaches the platform endpoints and the email validation API with the account's secret key", async () => {
    const t = await aTenant();
    // Given the backend's clients of both APIs
    const platform = messagingAs(t.secretKey);
    const emails = checked(createEmailClient({ baseUrl: email.url, token: t.secretKey }));
    // When it reads its account, and creates and reads an email list
    expect(unwrap(await platform.GET('/v1/account')).id).toBe(t.accountId);
    const list = unwrap(await emails.POST('/api/v1/emailList', { body: { name: 'Typed leads' } }));
    const read = unwrap(await emails.GET('/api/v1/emailList/{id}', { params: { path: { id: list.id } } }));
    // Then each answer is the document's object
    expect(read).toMatchObject({ id: list.id, name: 'Typed leads', email_count: 0, status: 'completed' });
    const contacts = unwrap(await platform.GET('/v1/contacts', { params: { query: { limit: 10 } } }));
    expect(contacts.data.map((c) => c.username).sort()).toEqual(['alice', 'bob', 'carol']);
  });
});
