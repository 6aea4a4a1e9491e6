import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeMember } from '#shared/data/group-members';
import { deleteGroup } from '#shared/data/groups';
import { issueToken } from '#shared/data/tokens';
import type { NewMessage } from '#shared/data/message-items';
import { contentPut, participantParts } from '#shared/data/messages';
import { transactNamed } from '#shared/db/batch';
import { derivedId } from '#shared/util/ids';
import { aTenant, anotherUserOf, groupMembersOf, type Tenant } from '../steps/given.ts';
import { apiClient, transports, type ApiClient } from '../steps/when.ts';

/**
 * Delivery (the rules of delivery, group members, who changes a message,
 * read state and unread counts in docs/messaging-api.md): a message reaches every other participant,
 * each in their own conversation, with their own read state.
 */
describe.each(transports())('delivery over %s', (transport) => {
  let api: ApiClient;
  beforeAll(async () => {
    api = await apiClient('messaging', transport);
  });
  afterAll(() => api.close());

  const asAlice = (t: Tenant) => ({ token: t.token });
  const asBob = (t: Tenant) => ({ token: t.token2 });
  const open = (token: string, form: Record<string, string>) => api.call('POST', '/v1/conversations', { token, form });
  const send = (token: string, conversation_id: string, message: string) =>
    api.call('POST', '/v1/messages', { token, form: { conversation_id, message } });
  const conversations = async (token: string) => (await api.call('GET', '/v1/conversations', { token })).body.data;
  const messagesOf = async (token: string, conversation_id: string) =>
    (await api.call('GET', '/v1/messages', { token, query: { conversation_id, limit: 100 } })).body.data;
  const conversation = async (token: string, id: string) => (await api.call('GET', `/v1/conversations/${id}`, { token })).body;

  /** alice's conversation with bob, and one message she sent in it. */
  async function aliceWroteToBob(t: Tenant, text = 'hi bob') {
    const mine = (await open(t.token, { contact_id: t.contactIds.bob! })).body;
    const sent = await send(t.token, mine.id, text);
    expect(sent.status).toBe(201);
    return { mine, sent: sent.body };
  }

  it("delivers a one-to-one message into the recipient's own conversation, opened for them with the defaults", async () => {
    // Given alice and bob, users of one account, and bob has no conversation yet
    const t = await aTenant();
    expect(await conversations(t.token2)).toEqual([]);
    // When alice sends to bob
    const { mine, sent } = await aliceWroteToBob(t);
    // Then bob has a conversation with alice, unread 1, active since the message
    const [theirs, ...more] = await conversations(t.token2);
    expect(more).toEqual([]);
    expect(theirs).toMatchObject({
      contact_id: t.contactIds.alice,
      group_id: null,
      is_pinned: false,
      is_muted: false,
      pinned_message_id: null,
      archived_at: null,
      last_opened_at: null,
      last_active_at: sent.created_at,
      unread_count: 1,
    });
    expect(theirs.id).not.toBe(mine.id);
    // And reads the message with the same id, in his own conversation, sent by alice, unread
    const [received] = await messagesOf(t.token2, theirs.id);
    expect(received).toMatchObject({ id: sent.id, conversation_id: theirs.id, message: 'hi bob', read_at: null });
    expect(received.contact.id).toBe(t.contactIds.alice);
    expect((await api.call('GET', `/v1/messages/${sent.id}`, asBob(t))).body.conversation_id).toBe(theirs.id);
    // And alice's own conversation has nothing unread
    expect((await conversation(t.token, mine.id)).unread_count).toBe(0);
  });

  it('carries a reply back: both conversations hold the same thread, each unread count its own', async () => {
    const t = await aTenant();
    const { mine, sent } = await aliceWroteToBob(t, 'ping');
    const [theirs] = await conversations(t.token2);
    // When bob replies in his conversation
    const reply = (await send(t.token2, theirs.id, 'pong')).body;
    // Then alice reads both, newest first, in hers
    const thread = await messagesOf(t.token, mine.id);
    expect(thread.map((m: { id: string }) => m.id)).toEqual([reply.id, sent.id]);
    expect(thread[0]).toMatchObject({ conversation_id: mine.id, message: 'pong', contact: { id: t.contactIds.bob } });
    expect((await conversation(t.token, mine.id)).unread_count).toBe(1);
    expect((await conversation(t.token2, theirs.id)).unread_count).toBe(1);
    // And both conversations moved to the reply's time
    expect((await conversation(t.token, mine.id)).last_active_at).toBe(reply.created_at);
    expect((await conversation(t.token2, theirs.id)).last_active_at).toBe(reply.created_at);
  });

  it("keeps pin, mute, archive and opening each user's own", async () => {
    const t = await aTenant();
    const { mine, sent } = await aliceWroteToBob(t);
    const [theirs] = await conversations(t.token2);
    const changed = await api.call('PUT', `/v1/conversations/${theirs.id}`, {
      ...asBob(t),
      form: { is_muted: 'true', is_pinned: 'true', archived_at: '1700000000', pinned_message_id: sent.id, opened: 'true' },
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({
      is_muted: true,
      is_pinned: true,
      archived_at: 1700000000,
      pinned_message_id: sent.id,
      unread_count: 0,
    });
    expect(changed.body.last_opened_at).toEqual(expect.any(Number));
    expect(await conversation(t.token, mine.id)).toMatchObject({
      is_muted: false,
      is_pinned: false,
      archived_at: null,
      pinned_message_id: null,
      last_opened_at: null,
    });
  });

  it('shows read_at to the reader and, in the sender’s view, when the other first read it; both ways', async () => {
    const t = await aTenant();
    const { mine, sent } = await aliceWroteToBob(t, 'first');
    const second = (await send(t.token, mine.id, 'second')).body;
    const [theirs] = await conversations(t.token2);
    expect((await conversation(t.token2, theirs.id)).unread_count).toBe(2);
    // When bob reads the second message, the first is read with it
    const read = await api.call('PUT', `/v1/messages/${second.id}`, { ...asBob(t), form: { read: 'true' } });
    expect(read.status).toBe(200);
    const at = read.body.read_at;
    expect(at).toEqual(expect.any(Number));
    expect((await messagesOf(t.token2, theirs.id)).map((m: { read_at: number }) => m.read_at)).toEqual([at, at]);
    expect((await conversation(t.token2, theirs.id)).unread_count).toBe(0);
    // Then alice sees both read, at bob's time
    expect((await messagesOf(t.token, mine.id)).map((m: { read_at: number }) => m.read_at)).toEqual([at, at]);
    expect(sent.read_at).toBeNull();
    // And the other way: bob's reply is unread for alice until she opens the conversation
    const reply = (await send(t.token2, theirs.id, 'reply')).body;
    expect((await api.call('GET', `/v1/messages/${reply.id}`, asBob(t))).body.read_at).toBeNull();
    const opened = await api.call('PUT', `/v1/conversations/${mine.id}`, { ...asAlice(t), form: { opened: 'true' } });
    expect(opened.body.unread_count).toBe(0);
    expect((await api.call('GET', `/v1/messages/${reply.id}`, asBob(t))).body.read_at).toEqual(expect.any(Number));
    // A user reading their own message reads nothing of theirs: it stays unread by the other
    const unreadByBob = (await send(t.token, mine.id, 'not yet')).body;
    await api.call('PUT', `/v1/messages/${unreadByBob.id}`, { ...asAlice(t), form: { read: 'true' } });
    expect((await api.call('GET', `/v1/messages/${unreadByBob.id}`, asAlice(t))).body.read_at).toBeNull();
    expect((await conversation(t.token2, theirs.id)).unread_count).toBe(1);
  });

  it('keeps unread_count exact under 40 concurrent sends and concurrent reads', async () => {
    const t = await aTenant();
    const { mine } = await aliceWroteToBob(t, 'start');
    const [theirs] = await conversations(t.token2);
    // When alice sends 40 messages at once while bob marks messages read and opens his conversation
    const sends = Array.from({ length: 40 }, (_, i) => send(t.token, mine.id, `m${i}`));
    const reads = Array.from({ length: 6 }, async (_, i) => {
      await new Promise((r) => setTimeout(r, i * 15));
      const page = await messagesOf(t.token2, theirs.id);
      const target = page[Math.floor(page.length / 2)];
      return i === 5
        ? api.call('PUT', `/v1/conversations/${theirs.id}`, { ...asBob(t), form: { opened: 'true' } })
        : target && api.call('PUT', `/v1/messages/${target.id}`, { ...asBob(t), form: { read: 'true' } });
    });
    const results = await Promise.all([...sends, ...reads]);
    expect(results.filter((r) => r && r.status >= 300)).toEqual([]);
    // Then bob's count is exactly his unread messages
    const page = await messagesOf(t.token2, theirs.id);
    expect(page).toHaveLength(41);
    const unread = page.filter((m: { read_at: number | null }) => m.read_at === null).length;
    expect((await conversation(t.token2, theirs.id)).unread_count).toBe(unread);
    // And opening reads them all
    const opened = await api.call('PUT', `/v1/conversations/${theirs.id}`, { ...asBob(t), form: { opened: 'true' } });
    expect(opened.body.unread_count).toBe(0);
    expect((await messagesOf(t.token2, theirs.id)).every((m: { read_at: number | null }) => m.read_at !== null)).toBe(true);
  });

  it('lets only the sender edit, change attachments or delete; anyone in the thread reacts', async () => {
    const t = await aTenant();
    const { mine, sent } = await aliceWroteToBob(t, 'original');
    const [theirs] = await conversations(t.token2);
    const forms: Record<string, string>[] = [
      { message: 'hijacked' },
      { 'attachments[0][type]': 'file', 'attachments[0][url]': 'https://x.example.com/a' },
      { attachments: '' },
    ];
    for (const form of forms) {
      const res = await api.call('PUT', `/v1/messages/${sent.id}`, { ...asBob(t), form });
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({
        type: 'invalid_request_error',
        code: 'permission_denied',
        param: Object.keys(form)[0]!.split('[')[0],
      });
    }
    const del = await api.call('DELETE', `/v1/messages/${sent.id}`, asBob(t));
    expect(del.status).toBe(403);
    expect(del.body.error.code).toBe('permission_denied');
    // A reaction by bob is seen by alice; alice's edit by bob
    expect((await api.call('PUT', `/v1/messages/${sent.id}`, { ...asBob(t), form: { 'reactions[ok][]': t.contactIds.bob! } })).status).toBe(
      200,
    );
    expect((await api.call('PUT', `/v1/messages/${sent.id}`, { ...asAlice(t), form: { message: 'edited' } })).status).toBe(200);
    expect((await api.call('GET', `/v1/messages/${sent.id}`, asAlice(t))).body.reactions).toEqual([{ ok: [t.contactIds.bob] }]);
    const bobs = (await api.call('GET', `/v1/messages/${sent.id}`, asBob(t))).body;
    expect(bobs).toMatchObject({ message: 'edited', conversation_id: theirs.id, updated_at: expect.any(Number) });
    // When alice deletes it, it is gone for both, and bob's unread count drops
    expect((await conversation(t.token2, theirs.id)).unread_count).toBe(1);
    expect((await api.call('DELETE', `/v1/messages/${sent.id}`, asAlice(t))).status).toBe(200);
    expect((await api.call('GET', `/v1/messages/${sent.id}`, asBob(t))).status).toBe(404);
    expect(await messagesOf(t.token2, theirs.id)).toEqual([]);
    expect(await messagesOf(t.token, mine.id)).toEqual([]);
    expect((await conversation(t.token2, theirs.id)).unread_count).toBe(0);
  });

  it("deletes only the participant's own view when they delete their conversation", async () => {
    const t = await aTenant();
    const { mine, sent } = await aliceWroteToBob(t, 'keep me');
    const [theirs] = await conversations(t.token2);
    expect((await api.call('DELETE', `/v1/conversations/${theirs.id}`, asBob(t))).status).toBe(200);
    // alice keeps the thread
    expect((await messagesOf(t.token, mine.id)).map((m: { id: string }) => m.id)).toEqual([sent.id]);
    expect((await api.call('GET', `/v1/messages/${sent.id}`, asBob(t))).status).toBe(404);
    // Her next message opens a new conversation for bob, holding only what came after
    const next = (await send(t.token, mine.id, 'again')).body;
    const [reopened, ...more] = await conversations(t.token2);
    expect(more).toEqual([]);
    expect(reopened.id).not.toBe(theirs.id);
    expect((await messagesOf(t.token2, reopened.id)).map((m: { id: string }) => m.id)).toEqual([next.id]);
    expect(reopened.unread_count).toBe(1);
  });

  it('keeps both pages of a one-to-one thread in step with every change, each page as the message reads by id', async () => {
    // Given alice wrote to bob, and an older message of hers stored before entries carried their messages
    const t = await aTenant();
    const { mine, sent } = await aliceWroteToBob(t, 'first words');
    const [theirs] = await conversations(t.token2);
    const older = await legacyMessage(t, mine.id, theirs.id);
    // When bob reacts and reads, and alice edits and attaches
    const change = (token: string, form: Record<string, string>) => api.call('PUT', `/v1/messages/${sent.id}`, { token, form });
    expect((await change(t.token2, { 'reactions[ok][]': t.contactIds.bob! })).status).toBe(200);
    expect((await change(t.token, { message: 'second words' })).status).toBe(200);
    expect((await change(t.token, { 'attachments[0][type]': 'file', 'attachments[0][url]': 'https://example.com/a.pdf' })).status).toBe(
      200,
    );
    expect((await change(t.token2, { read: 'true' })).status).toBe(200);
    // Then each page shows the message exactly as reading it by id does, in that reader's view
    for (const [token, conv] of [
      [t.token, mine.id],
      [t.token2, theirs.id],
    ] as const) {
      const page = await messagesOf(token, conv);
      const byId = await Promise.all(
        page.map(async (m: { id: string }) => (await api.call('GET', `/v1/messages/${m.id}`, { token })).body),
      );
      expect(page).toEqual(byId);
      expect(page.map((m: { id: string }) => m.id)).toEqual([sent.id, older]);
      expect(page[0]).toMatchObject({ message: 'second words', reactions: [{ ok: [t.contactIds.bob] }], updated_at: expect.any(Number) });
      expect(page[0].attachments).toHaveLength(1);
      expect(page[0].read_at).toEqual(expect.any(Number));
    }
    // And when bob deletes his conversation, alice still changes her message, in her page too
    expect((await api.call('DELETE', `/v1/conversations/${theirs.id}`, asBob(t))).status).toBe(200);
    expect((await change(t.token, { message: 'third words' })).status).toBe(200);
    expect((await messagesOf(t.token, mine.id))[0].message).toBe('third words');
  });

  it('lets the recipient read what the sender wrote after the sender deleted their conversation', async () => {
    // Given alice wrote twice to bob, then deleted her conversation (her entries, which record his reads, go with it)
    const t = await aTenant();
    const { mine, sent } = await aliceWroteToBob(t, 'one');
    const second = (await send(t.token, mine.id, 'two')).body;
    expect((await api.call('DELETE', `/v1/conversations/${mine.id}`, asAlice(t))).status).toBe(200);
    const [theirs] = await conversations(t.token2);
    // When bob reads the first message, then opens the conversation
    expect((await api.call('PUT', `/v1/messages/${sent.id}`, { ...asBob(t), form: { read: 'true' } })).status).toBe(200);
    expect((await api.call('PUT', `/v1/conversations/${theirs.id}`, { ...asBob(t), form: { opened: 'true' } })).status).toBe(200);
    // Then both are read in his view and nothing is left unread
    const page = await messagesOf(t.token2, theirs.id);
    expect(page.map((m: { id: string; read_at: number | null }) => [m.id, m.read_at !== null])).toEqual([
      [second.id, true],
      [sent.id, true],
    ]);
    expect((await conversation(t.token2, theirs.id)).unread_count).toBe(0);
  });

  it('delivers a group message to every member (50 and more), and to nobody else', async () => {
    const t = await aTenant();
    const members = await groupMembersOf(t, 50);
    const outsider = await anotherUserOf(t, 'outsider');
    // A non-member cannot open the group's conversation
    const refused = await open(outsider.token, { group_id: t.groupId });
    expect(refused.status).toBe(404);
    expect(refused.body.error.param).toBe('group_id');
    // When alice sends to the group
    const group = (await open(t.token, { group_id: t.groupId })).body;
    const sent = (await send(t.token, group.id, 'hello team')).body;
    // Then every other member, bob and carol among them, has it once, in a group conversation of their own
    const readers = [...members.map((m) => m.token!), t.token2];
    for (const token of readers) {
      const [theirs, ...more] = await conversations(token);
      expect(more).toEqual([]);
      expect(theirs).toMatchObject({ group_id: t.groupId, contact_id: null, unread_count: 1 });
      expect((await messagesOf(token, theirs.id)).map((m: { id: string }) => m.id)).toEqual([sent.id]);
    }
    // And the outsider has nothing
    expect(await conversations(outsider.token)).toEqual([]);
    expect((await api.call('GET', `/v1/messages/${sent.id}`, { token: outsider.token })).status).toBe(404);
    // A member's reply reaches alice
    const [bobsGroup] = await conversations(t.token2);
    const reply = (await send(t.token2, bobsGroup.id, 'hi all')).body;
    expect((await messagesOf(t.token, group.id)).map((m: { id: string }) => m.id)).toEqual([reply.id, sent.id]);
    expect((await conversation(t.token, group.id)).unread_count).toBe(1);
  });

  it.skipIf(transport === 'remote')(
    'refuses a send to a deleted group whose members are not yet purged, as to a group it never had',
    async () => {
      // Given alice's group conversation, and the group deleted with its members still in place (its purge not yet run)
      const t = await aTenant();
      const alices = (await open(t.token, { group_id: t.groupId })).body;
      expect(await deleteGroup(t.accountId, t.groupId, [])).toBe(true);
      // When alice sends to it
      const res = await send(t.token, alices.id, 'after the delete');
      // Then it is a 404 naming her conversation, and nothing reached bob
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param: 'conversation_id' });
      expect((await conversations(t.token2)).filter((c: { group_id: string | null }) => c.group_id === t.groupId)).toEqual([]);
    },
  );

  it("keeps a removed member's view, but refuses their reactions, reads, edits and deletes with 404, changing nothing", async () => {
    // Given bob's message and alice's in the group, both delivered to bob and carol
    const t = await aTenant();
    const carol = await issueToken({ accountId: t.accountId, contactId: t.contactIds.carol! });
    const alices = (await open(t.token, { group_id: t.groupId })).body;
    const bobs = (await open(t.token2, { group_id: t.groupId })).body;
    const fromBob = (await send(t.token2, bobs.id, 'from bob')).body;
    const fromAlice = (await send(t.token, alices.id, 'from alice')).body;
    // When bob is removed from the group
    expect(await removeMember(t.accountId, t.groupId, t.contactIds.bob!)).toBe(true);
    // Then he still reads what he received
    expect((await messagesOf(t.token2, bobs.id)).map((m: { id: string }) => m.id)).toEqual([fromAlice.id, fromBob.id]);
    expect((await api.call('GET', `/v1/messages/${fromAlice.id}`, asBob(t))).status).toBe(200);
    // But reacting, reading, editing or deleting is a 404, as for a message he never had
    const attempts = [
      ['PUT', fromAlice.id, { [`reactions[thumbsup][]`]: t.contactIds.bob! }],
      ['PUT', fromAlice.id, { read: 'true' }],
      ['PUT', fromBob.id, { message: 'edited after leaving' }],
      ['PUT', fromBob.id, { [`reactions[heart][]`]: t.contactIds.bob! }],
      ['DELETE', fromBob.id, undefined],
    ] as const;
    for (const [method, id, form] of attempts) {
      const res = await api.call(method, `/v1/messages/${id}`, { token: t.token2, ...(form ? { form } : {}) });
      expect(res.status, `${method} ${JSON.stringify(form)}`).toBe(404);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param: 'id' });
    }
    // Opening his own view reads it for him alone: his unread count falls, no sender learns of it
    const opened = await api.call('PUT', `/v1/conversations/${bobs.id}`, { token: t.token2, form: { opened: 'true' } });
    expect(opened.body.unread_count).toBe(0);
    // And the members see both messages as they were: no reaction, no edit, not read by anyone
    const [carolsGroup] = await conversations(carol);
    const seen = await messagesOf(carol, carolsGroup.id);
    expect(seen.map((m: { id: string; message: string; reactions: unknown[] }) => [m.id, m.message, m.reactions])).toEqual([
      [fromAlice.id, 'from alice', []],
      [fromBob.id, 'from bob', []],
    ]);
    expect((await api.call('GET', `/v1/messages/${fromAlice.id}`, asAlice(t))).body).toMatchObject({ read_at: null, updated_at: null });
    // While a member's reaction still goes through
    const reacted = await api.call('PUT', `/v1/messages/${fromAlice.id}`, {
      token: carol,
      form: { 'reactions[heart][]': t.contactIds.carol! },
    });
    expect(reacted.status).toBe(200);
  });
});

/** A message of alice's to bob stored as before entries carried their messages: the thread's item and two bare entries. */
async function legacyMessage(t: Tenant, aliceConversation: string, bobConversation: string): Promise<string> {
  const message: NewMessage = {
    // A minute before alice's message (newId would not go back in time: its ids only ever increase).
    id: derivedId('msg', Date.now() - 60_000, `legacy-${t.accountId}`),
    account_id: t.accountId,
    thread: [t.userContactId, t.contactIds.bob!].sort().join('+'),
    contact_id: t.userContactId,
    message: 'from before',
    attachments: [],
    created_at: Math.floor(Date.now() / 1000) - 60,
    extras_bytes: 0,
  };
  const failed = await transactNamed([
    ['message', contentPut(message)],
    ...participantParts({ accountId: t.accountId, contactId: t.userContactId }, aliceConversation, message),
    ...participantParts({ accountId: t.accountId, contactId: t.contactIds.bob! }, bobConversation, message),
  ]);
  expect(failed).toEqual([]);
  return message.id;
}
