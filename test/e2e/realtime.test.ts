import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putConnection, userConnections } from '#shared/data/connections';
import { removeMember } from '#shared/data/group-members';
import { hashToken, issueToken, revokeToken } from '#shared/data/tokens';
import type { RunningRealtime } from '../../scripts/local/realtime-server.ts';
import { eventually } from '../steps/eventually.ts';
import { aTenant, groupMembersOf } from '../steps/given.ts';
import { realtimeStack, type Frame, type Socket as Client } from '../steps/sockets.ts';
import type { ApiClient } from '../steps/when.ts';

/**
 * Realtime (docs/realtime.md): a real WebSocket client against the
 * local WebSocket API, which runs the stack's handlers; events come from the
 * table's change stream through the same fan-out code as on AWS.
 */
let stack: Awaited<ReturnType<typeof realtimeStack>>;
let server: RunningRealtime;
let messaging: ApiClient;

beforeAll(async () => {
  stack = await realtimeStack();
  ({ server, messaging } = stack);
});

afterAll(() => stack?.stop());

const connect = (token: string, via: 'header' | 'protocol' = 'header') => stack.connect(token, { via });

/** The status a refused upgrade answered. */
function refusal(headers: Record<string, string>, protocols?: string[], path = ''): Promise<number> {
  const ws = new WebSocket(`${server.url}${path}`, protocols, { headers });
  return new Promise((resolve, reject) => {
    ws.once('open', () => reject(new Error('the upgrade was accepted')));
    ws.once('unexpected-response', (_req, res) => resolve(res.statusCode!));
    ws.once('error', () => undefined);
  });
}

const ofType = (c: Client, type: string) => c.frames.filter((f) => f.type === type);
const arrives = (c: Client, match: (f: Frame) => boolean, what = 'the frame') =>
  eventually(async () => c.frames.find(match), { what: `${what} on a socket` });
const send = (token: string, conversationId: string, message: string) =>
  messaging.call('POST', '/v1/messages', { token, form: { conversation_id: conversationId, message } });
const connectionsOf = (accountId: string, contactId: string, count: number) =>
  eventually(async () => (await userConnections({ accountId, contactId })).length === count, {
    what: `${count} connection records of ${contactId}`,
  });

async function conversationWith(token: string, target: { contact_id: string } | { group_id: string }) {
  const res = await messaging.call('POST', '/v1/conversations', { token, form: target });
  expect([200, 201]).toContain(res.status);
  return res.body.id as string;
}

/**
 * The sentinel for frames a socket must not get: its user sends a message
 * of their own, and the test waits for that message's frame. The stream is
 * read in commit order and each batch's frames are posted before the next
 * batch is read, so any frame of a change committed before the sentinel
 * (and read before it, as a change whose frames the test has seen was) is
 * on the socket by then. Answers the frames the socket got other than the
 * sentinel's own (its conversation's and its message's).
 */
async function framesBeforeSentinel(c: Client, token: string, to: { contact_id: string }): Promise<Frame[]> {
  const conv = await conversationWith(token, to);
  const sent = (await send(token, conv, 'sentinel')).body;
  await arrives(c, (f) => f.type === 'message.created' && f.data.object.id === sent.id, 'the sentinel message');
  return c.frames.filter((f) => f.data?.object?.id !== conv && f.data?.object?.conversation_id !== conv);
}

describe('realtime WebSocket', () => {
  it('refuses the upgrade with 401 without a token or with a bad one', async () => {
    // Given no token, a malformed one, an unknown one
    // When each tries to connect, in the header or in the subprotocols
    // Then each upgrade answers 401
    expect(await refusal({})).toBe(401);
    expect(await refusal({ Authorization: 'Bearer nope' })).toBe(401);
    expect(await refusal({ Authorization: `Bearer tok_${'A'.repeat(43)}` })).toBe(401);
    expect(await refusal({}, ['bearer', `tok_${'B'.repeat(43)}`])).toBe(401);
    expect(await refusal({}, ['bearer'])).toBe(401);
  });

  it("refuses a path other than the API's endpoint with 403, before any credential is looked at", async () => {
    // Given a user's valid token
    const t = await aTenant();
    // When it connects to another path of the server, Then the upgrade is refused as API Gateway refuses it
    expect(await refusal({ Authorization: `Bearer ${t.token}` }, undefined, '/elsewhere')).toBe(403);
    expect(await refusal({}, undefined, '/prod/x')).toBe(403);
    // And the stage's own path, as on AWS, is the endpoint too
    const socket = await stack.connect(t.token, { path: '/prod' });
    expect(socket.ws.readyState).toBe(socket.ws.OPEN);
  });

  it("refuses the account's secret key: a socket carries one user's events", async () => {
    const t = await aTenant();
    expect(await refusal({ Authorization: `Bearer ${t.secretKey}` })).toBe(401);
    expect(await refusal({}, ['bearer', t.secretKey])).toBe(401);
  });

  it('accepts both forms of the token, and names the bearer subprotocol back to a browser', async () => {
    const t = await aTenant();
    // When alice connects with the header, and again with the subprotocol pair
    const viaHeader = await connect(t.token, 'header');
    const viaProtocol = await connect(t.token, 'protocol');
    // Then both are open, the second with the `bearer` protocol, and both are alice's connections
    expect(viaProtocol.ws.protocol).toBe('bearer');
    expect(viaHeader.ws.protocol).toBe('');
    const mine = await userConnections({ accountId: t.accountId, contactId: t.userContactId });
    expect(mine).toHaveLength(2);
    // And a ping is answered
    viaHeader.ws.send(JSON.stringify({ action: 'ping' }));
    await arrives(viaHeader, (f) => f.type === 'pong');
    // And anything else is answered with an error frame, the socket kept open
    viaProtocol.ws.send('hello');
    await arrives(viaProtocol, (f) => f.type === 'error');
    expect(viaProtocol.ws.readyState).toBe(WebSocket.OPEN);
  });

  it("delivers a message to the recipient in their own view, to the sender's other device, and to nobody else", async () => {
    // Given alice with two devices, bob, carol of the same account, and a user of another account, all connected
    const t = await aTenant();
    const other = await aTenant();
    const carolToken = await issueToken({ accountId: t.accountId, contactId: t.contactIds.carol! });
    const [alicePhone, aliceLaptop, bob, carol, stranger] = await Promise.all([
      connect(t.token),
      connect(t.token, 'protocol'),
      connect(t.token2),
      connect(carolToken),
      connect(other.token),
    ]);
    // When alice sends bob a message from her phone
    const aliceConv = await conversationWith(t.token, { contact_id: t.contactIds.bob! });
    const sent = (await send(t.token, aliceConv, 'hi bob')).body;
    // Then bob's frame carries his own conversation and the message, sent by alice
    const bobFrame = await arrives(bob, (f) => f.type === 'message.created');
    const bobConv = (await messaging.call('GET', '/v1/conversations', { token: t.token2 })).body.data[0].id;
    expect(bobConv).not.toBe(aliceConv);
    expect(bobFrame).toMatchObject({
      user: t.contactIds.bob,
      data: { object: { id: sent.id, conversation_id: bobConv, message: 'hi bob', contact: { id: t.contactIds.alice }, read_at: null } },
    });
    expect(bobFrame.id).toMatch(/^evt_/);
    // Dated by the change: the delivery is part of the send, so the second is the message's own
    expect(bobFrame.created_at).toBe(sent.created_at);
    // And both of alice's devices get it in her view
    for (const device of [alicePhone, aliceLaptop]) {
      const frame = await arrives(device, (f) => f.type === 'message.created');
      expect(frame).toMatchObject({ user: t.contactIds.alice, data: { object: { id: sent.id, conversation_id: aliceConv } } });
    }
    // And bob hears of the conversation opened for him; alice of hers
    await arrives(bob, (f) => f.type === 'conversation.created' && f.data.object.id === bobConv);
    // And carol (not a participant) and the other account get nothing of it: nothing before a message of their own
    expect(await framesBeforeSentinel(carol, carolToken, { contact_id: t.contactIds.alice! })).toEqual([]);
    expect(await framesBeforeSentinel(stranger, other.token, { contact_id: other.contactIds.bob! })).toEqual([]);
    // And no frame reached a user other than its own
    for (const f of [...alicePhone.frames, ...aliceLaptop.frames]) expect(f.user).toBe(t.contactIds.alice);
    for (const f of bob.frames) expect(f.user).toBe(t.contactIds.bob);
  });

  it("tells the sender when another participant reads their message, the reader's devices too, and every participant of an edit", async () => {
    // Given alice and bob connected, and two messages from alice to bob
    const t = await aTenant();
    const [alice, bob] = await Promise.all([connect(t.token), connect(t.token2)]);
    const aliceConv = await conversationWith(t.token, { contact_id: t.contactIds.bob! });
    const earlier = (await send(t.token, aliceConv, 'read me first')).body;
    const sent = (await send(t.token, aliceConv, 'read me')).body;
    await arrives(bob, (f) => f.type === 'message.created' && f.data.object.id === sent.id);
    // When bob reads the second (which reads the first too)
    const read = await messaging.call('PUT', `/v1/messages/${sent.id}`, { token: t.token2, form: { read: 'true' } });
    expect(read.status).toBe(200);
    // Then alice gets message.read, naming bob, with the message in her view
    const frame = await arrives(alice, (f) => f.type === 'message.read' && f.data.object.id === sent.id);
    expect(frame).toMatchObject({
      user: t.contactIds.alice,
      data: { reader: t.contactIds.bob, read_at: read.body.read_at, object: { id: sent.id, conversation_id: aliceConv } },
    });
    // And bob's own devices hear both messages read, in his view, as his other actions: message.updated with his read_at
    for (const id of [earlier.id, sent.id]) {
      const own = await arrives(bob, (f) => f.type === 'message.updated' && f.data.object.id === id);
      expect(own.data.object).toMatchObject({ conversation_id: read.body.conversation_id, read_at: expect.any(Number) });
    }
    // When alice edits it
    await messaging.call('PUT', `/v1/messages/${sent.id}`, { token: t.token, form: { message: 'read me, edited' } });
    // Then both get message.updated in their own view (bob's with his read time)
    const bobUpdate = await arrives(bob, (f) => f.type === 'message.updated' && f.data.object.message === 'read me, edited');
    expect(bobUpdate.data.object).toMatchObject({ message: 'read me, edited', read_at: read.body.read_at });
    expect(bobUpdate.data.object.conversation_id).not.toBe(aliceConv);
    // And bob, the reader, was not told of his own read: the edit, a later change, came after it
    expect(ofType(bob, 'message.read')).toEqual([]);
    const aliceUpdate = await arrives(alice, (f) => f.type === 'message.updated' && f.data.object.message === 'read me, edited');
    expect(aliceUpdate.data.object).toMatchObject({ message: 'read me, edited', conversation_id: aliceConv });
    // When alice deletes it, bob's view hears message.deleted
    await messaging.call('DELETE', `/v1/messages/${sent.id}`, { token: t.token });
    const deleted = await arrives(bob, (f) => f.type === 'message.deleted');
    expect(deleted.data.object).toMatchObject({ id: sent.id, deleted: true });
  });

  it("tells no sender of a read by a member removed from the group, while the reader's own devices still hear it", async () => {
    // Given alice connected, and her message to the group delivered to bob
    const t = await aTenant();
    const [alice, bob] = await Promise.all([connect(t.token), connect(t.token2)]);
    const alicesGroup = await conversationWith(t.token, { group_id: t.groupId });
    const bobsGroup = await conversationWith(t.token2, { group_id: t.groupId });
    const sent = (await send(t.token, alicesGroup, 'to the group')).body;
    await arrives(bob, (f) => f.type === 'message.created' && f.data.object.id === sent.id);
    // When bob is removed from the group, then opens his view of it
    expect(await removeMember(t.accountId, t.groupId, t.contactIds.bob!)).toBe(true);
    const opened = await messaging.call('PUT', `/v1/conversations/${bobsGroup}`, { token: t.token2, form: { opened: 'true' } });
    expect(opened.body.unread_count).toBe(0);
    // Then his own devices hear the message read in his view
    await arrives(bob, (f) => f.type === 'message.updated' && f.data.object.id === sent.id && f.data.object.read_at !== null);
    // But alice hears nothing of it: no message.read before a message of her own
    const frames = await framesBeforeSentinel(alice, t.token, { contact_id: t.contactIds.bob! });
    expect(frames.filter((f) => f.type === 'message.read')).toEqual([]);
  });

  it('forgets a closed connection, and one API Gateway reports gone (unless it is still in its handshake)', async () => {
    const t = await aTenant();
    const owner = { accountId: t.accountId, contactId: t.userContactId };
    // Given alice connected, a stale record of a connection long gone, and one just made whose handshake is not finished
    const client = await connect(t.token);
    await putConnection(owner, 'c3RhbGVjb25uZWN0aW9u', hashToken(t.token), {}, Math.floor(Date.now() / 1000) - 60);
    await putConnection(owner, 'aGFuZHNoYWtpbmc=', hashToken(t.token));
    expect(await userConnections(owner)).toHaveLength(3);
    // When a frame is posted to all three (an event of hers)
    const conv = await conversationWith(t.token, { contact_id: t.contactIds.bob! });
    await send(t.token, conv, 'anyone there?');
    await arrives(client, (f) => f.type === 'message.created');
    // Then the gone one is removed; the live one and the one in its handshake are kept
    await connectionsOf(owner.accountId, owner.contactId, 2);
    expect((await userConnections(owner)).map((c) => c.id)).toContain('aGFuZHNoYWtpbmc=');
    // When alice closes her socket, her connection record goes too
    await client.close();
    await connectionsOf(owner.accountId, owner.contactId, 1);
  });

  it('closes the sockets of a revoked token at its next event, and sends them nothing more', async () => {
    // Given bob connected with his token, and alice's conversation with him
    const t = await aTenant();
    const bob = await connect(t.token2);
    const closed = new Promise<number>((resolve) => bob.ws.once('close', (code) => resolve(code)));
    const conv = await conversationWith(t.token, { contact_id: t.contactIds.bob! });
    await send(t.token, conv, 'before');
    await arrives(bob, (f) => f.type === 'message.created');
    // When his token is revoked, and alice sends him another message
    await revokeToken(t.token2);
    const after = (await send(t.token, conv, 'after')).body;
    // Then his socket is closed by the server, without that message, and his connection is forgotten
    await closed;
    expect(bob.frames.some((f) => f.data?.object?.id === after.id)).toBe(false);
    await connectionsOf(t.accountId, t.contactIds.bob!, 0);
  });

  it('gives each of 50 connected members every event of their own exactly once', async () => {
    // Given a group of 50 members (alice, bob, carol and 47 more), each connected
    const t = await aTenant();
    const more = await groupMembersOf(t, 47);
    const carolToken = await issueToken({ accountId: t.accountId, contactId: t.contactIds.carol! });
    const tokens = [t.token, t.token2, carolToken, ...more.map((m) => m.token!)];
    const clients = await Promise.all(tokens.map((token) => connect(token)));
    // When alice sends the group three messages
    const conv = await conversationWith(t.token, { group_id: t.groupId });
    const sent: string[] = [];
    for (const text of ['one', 'two', 'three']) sent.push((await send(t.token, conv, text)).body.id);
    // Then every member's socket gets message.created for each of the three, once each, in their own view
    await eventually(() => clients.every((c) => ofType(c, 'message.created').length >= 3), {
      what: 'three messages on all 50 sockets',
      timeoutMs: 25_000,
    });
    // (counted once a fourth message, sent after those frames were seen, has reached every socket: a later
    // change of each member's conversation, read after theirs, so any repeat of the three came before it)
    const sentinel = (await send(t.token, conv, 'sentinel')).body.id;
    await eventually(() => clients.every((c) => c.frames.some((f) => f.type === 'message.created' && f.data.object.id === sentinel)), {
      what: 'the fourth message on all 50 sockets',
      timeoutMs: 25_000,
    });
    const convIds = new Set<unknown>();
    for (const c of clients) {
      const created = ofType(c, 'message.created').filter((f) => f.data.object.id !== sentinel);
      expect(created.map((f) => f.data.object.id).sort()).toEqual([...sent].sort());
      expect(new Set(created.map((f) => f.user)).size).toBe(1);
      expect(new Set(created.map((f) => f.id)).size).toBe(3);
      // No event of any type reached a client twice
      const events = c.frames.filter((f) => f.id);
      expect(new Set(events.map((f) => f.id)).size).toBe(events.length);
      convIds.add(created[0]!.data.object.conversation_id);
    }
    // And each member's frames name their own conversation (50 views of one thread)
    expect(convIds.size).toBe(50);
  }, 60_000);
});
