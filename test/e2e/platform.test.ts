import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createHash } from 'node:crypto';
import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conversationIdFor } from '#shared/data/conversations';
import { hashToken } from '#shared/data/tokens';
import { db, tableName } from '#shared/db/client';
import { keys } from '#shared/db/keys';
import { routes } from '#shared/routes';
import { aTenant, type Tenant } from '../steps/given.ts';
import { eventually } from '../steps/eventually.ts';
import { scopedEnv } from '../steps/scoped-env.ts';
import { apiClient, transports, type ApiClient } from '../steps/when.ts';

/**
 * The platform endpoints (issue: the app's backend provisions users, tokens,
 * groups and members with the account's secret key): what an app does on a
 * sign-up, a team change and a departure, each refusal precise.
 */
describe.each(transports())('platform endpoints over %s', (transport) => {
  let api: ApiClient;
  let t: Tenant;
  const asBackend = () => ({ token: t.secretKey });

  beforeAll(async () => {
    api = await apiClient('messaging', transport);
    t = await aTenant();
  });
  afterAll(() => api.close());

  /** A contact created over HTTP, with a token of its own. */
  async function aUser(username: string) {
    const contact = await api.call('POST', '/v1/contacts', { ...asBackend(), form: { username } });
    expect(contact.status).toBe(201);
    const token = await api.call('POST', `/v1/contacts/${contact.body.id}/tokens`, { ...asBackend(), form: {} });
    expect(token.status).toBe(201);
    return { id: contact.body.id as string, token: token.body.token as string, tokenId: token.body.id as string };
  }

  it('signs a user up, lets them chat, and refuses their token once revoked', async () => {
    // Given the app's backend creates a contact and a token for its new user
    const created = await api.call('POST', '/v1/contacts', {
      ...asBackend(),
      form: { username: 'Dana', phone_number: '+15550100044', avatar_url: 'https://example.com/dana.png' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^ct_/),
      username: 'Dana',
      phone_number: '+15550100044',
      avatar_url: 'https://example.com/dana.png',
      last_active_at: null,
      created_at: expect.any(Number),
    });
    const issued = await api.call('POST', `/v1/contacts/${created.body.id}/tokens`, { ...asBackend(), json: { expires_in: 3600 } });
    expect(issued.status).toBe(201);
    expect(issued.body).toMatchObject({
      id: expect.stringMatching(/^tok_[0-9A-Z]{26}$/),
      token: expect.stringMatching(/^tok_[A-Za-z0-9_-]{43}$/),
      contact_id: created.body.id,
      expires_at: issued.body.created_at + 3600,
    });

    // When the user opens a conversation with alice and sends a message with that token
    const dana = issued.body.token as string;
    const conv = await api.call('POST', '/v1/conversations', { token: dana, form: { contact_id: t.userContactId } });
    expect(conv.status).toBe(201);
    const sent = await api.call('POST', '/v1/messages', { token: dana, form: { conversation_id: conv.body.id, message: 'hi alice' } });
    expect(sent.status).toBe(201);
    expect(sent.body.contact).toMatchObject({ id: created.body.id, username: 'Dana' });
    // Then alice has it in her own conversation with Dana
    const inbox = await api.call('GET', '/v1/messages', { token: t.token });
    expect(inbox.body.data.map((m: { id: string }) => m.id)).toContain(sent.body.id);

    // And the token is listed without its secret, then revoked and refused at once
    const listed = await api.call('GET', `/v1/contacts/${created.body.id}/tokens`, asBackend());
    expect(listed.body).toEqual({ has_more: false, data: [expect.objectContaining({ id: issued.body.id, revoked_at: null })] });
    expect(listed.text).not.toContain(dana);
    const revoked = await api.call('DELETE', `/v1/contacts/${created.body.id}/tokens/${issued.body.id}`, asBackend());
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ id: issued.body.id, deleted: true, revoked_at: expect.any(Number) });
    const refused = await api.call('GET', '/v1/conversations', { token: dana });
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toMatch(/^Bearer/);
  });

  it('replays an idempotent token create with the same token, which its record keeps only sealed', async () => {
    const user = await aUser('quinn');
    const key = `token-${transport}`;
    const first = await api.call('POST', `/v1/contacts/${user.id}/tokens`, {
      ...asBackend(),
      form: {},
      headers: { 'Idempotency-Key': key },
    });
    const replay = await api.call('POST', `/v1/contacts/${user.id}/tokens`, {
      ...asBackend(),
      form: {},
      headers: { 'Idempotency-Key': key },
    });
    expect(first.body.token).toMatch(/^tok_/);
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.text).toBe(first.text);
    // One token issued by the two requests (and the one aUser made), and the one shown works
    expect((await api.call('GET', `/v1/contacts/${user.id}/tokens`, asBackend())).body.data).toHaveLength(2);
    expect((await api.call('GET', '/v1/conversations', { token: replay.body.token })).status).toBe(200);
    // The record of the key holds the answer with the token sealed, not the token
    const record = await db().send(
      new GetCommand({
        TableName: tableName(),
        Key: keys.idempotency.key({ acct: t.accountId, key_hash: createHash('sha256').update(key).digest('hex') }),
      }),
    );
    expect(JSON.stringify(record.Item?.response)).toContain('"token\\":\\"local:');
    expect(JSON.stringify(record.Item)).not.toContain(first.body.token);
  });

  it('replays an idempotent webhook endpoint create with the same secret, and a file create with the same file', async () => {
    // Given a loopback receiver allowed, as npm start allows it (no resolver here for a public name)
    const env = scopedEnv(() => undefined);
    env.set({ ALLOW_PRIVATE_WEBHOOKS: 'true' });
    onTestFinished(() => env.restore());
    const key = `webhook-${transport}`;
    const create = () =>
      api.call('POST', '/v1/webhook_endpoints', {
        ...asBackend(),
        form: { url: 'http://127.0.0.1:9/replayed' },
        headers: { 'Idempotency-Key': key },
      });
    const first = await create();
    const replay = await create();
    expect(first.body.secret).toMatch(/^whsec_/);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.text).toBe(first.text);

    const file = () =>
      api.call('POST', '/v1/files', {
        token: t.token,
        form: { name: 'a.txt', content_type: 'text/plain', size: '3' },
        headers: { 'Idempotency-Key': `file-${transport}` },
      });
    const firstFile = await file();
    const replayedFile = await file();
    expect(firstFile.status).toBe(201);
    expect(replayedFile.headers['idempotent-replayed']).toBe('true');
    expect(replayedFile.body).toEqual(firstFile.body);
  });

  /** A new account with 2 webhook endpoints (loopback URLs allowed, as npm start allows them), and its create. */
  async function accountWithTwoEndpoints() {
    const env = scopedEnv(() => undefined);
    env.set({ ALLOW_PRIVATE_WEBHOOKS: 'true' });
    onTestFinished(() => env.restore());
    const own = await aTenant();
    const backend = { token: own.secretKey };
    const create = (path: string) => api.call('POST', '/v1/webhook_endpoints', { ...backend, form: { url: `http://127.0.0.1:9/${path}` } });
    for (const path of ['a', 'b']) expect((await create(path)).status).toBe(201);
    return { own, backend, create };
  }

  it('holds an account to 20 webhook endpoints against creates racing each other, and a delete makes room', async () => {
    // Given an account of its own with 2 endpoints
    const { backend, create } = await accountWithTwoEndpoints();
    // When 25 creates are sent at once
    const raced = await Promise.all(Array.from({ length: 25 }, (_, i) => create(`race${i}`)));
    // Then exactly 18 are created, the others refused as over the limit
    expect(raced.filter((r) => r.status === 201)).toHaveLength(18);
    for (const r of raced.filter((r) => r.status !== 201)) expect(r.body.error).toMatchObject({ code: 'too_many_webhook_endpoints' });
    // And the list shows all 20, and nothing more
    const listed = await api.call('GET', '/v1/webhook_endpoints', { ...backend, query: { limit: 100 } });
    expect(listed.body).toMatchObject({ has_more: false });
    expect(listed.body.data).toHaveLength(20);
    // And one more is refused until one is deleted
    expect((await create('late')).status).toBe(409);
    expect((await api.call('DELETE', `/v1/webhook_endpoints/${listed.body.data[0].id}`, backend)).status).toBe(200);
    expect((await create('late')).status).toBe(201);
    expect((await create('later')).status).toBe(409);
  });

  it('counts the endpoints an account made before its count was kept, once, at its next create', async () => {
    // Given an account with 2 endpoints and no count (as accounts made before 2026-11-28 are)
    const { own, create } = await accountWithTwoEndpoints();
    const countKey = keys.webhookCount.key({ acct: own.accountId });
    await db().send(new DeleteCommand({ TableName: tableName(), Key: countKey }));
    // When it creates another
    expect((await create('c')).status).toBe(201);
    // Then its count holds all three, and the limit counts them
    const count = await db().send(new GetCommand({ TableName: tableName(), Key: countKey, ConsistentRead: true }));
    expect(count.Item?.endpoints).toBe(3);
  });

  it('refuses an unknown event type in enabled_events, beside * too, and takes * alone as every type', async () => {
    const env = scopedEnv(() => undefined);
    env.set({ ALLOW_PRIVATE_WEBHOOKS: 'true' });
    onTestFinished(() => env.restore());
    const create = (json: unknown) => api.call('POST', '/v1/webhook_endpoints', { ...asBackend(), json });
    for (const enabled of [['*', 'mesage.created'], ['x']]) {
      const refused = await create({ url: 'http://127.0.0.1:9/typo', enabled_events: enabled });
      expect(refused.status, refused.text).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'parameter_invalid', param: 'enabled_events' });
      expect(refused.body.error.message).toContain(`"${enabled.at(-1)}"`);
    }
    const all = await create({ url: 'http://127.0.0.1:9/all', enabled_events: ['*'] });
    expect(all.status, all.text).toBe(201);
    await api.call('DELETE', `/v1/webhook_endpoints/${all.body.id}`, asBackend());
  });

  it('refuses an expired token like a revoked one', async () => {
    const user = await aUser('erin');
    expect((await api.call('GET', '/v1/conversations', { token: user.token })).status).toBe(200);
    // Given the token's expiry passed (written directly: the shortest expires_in is a minute)
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.token.key({ token_hash: hashToken(user.token) }),
        UpdateExpression: 'SET expires_at = :past',
        ExpressionAttributeValues: { ':past': Math.floor(Date.now() / 1000) - 1 },
      }),
    );
    expect((await api.call('GET', '/v1/conversations', { token: user.token })).status).toBe(401);
  });

  it('takes each credential only where it belongs', async () => {
    const onPlatform = await api.call('GET', '/v1/contacts', { token: t.token });
    expect(onPlatform.status).toBe(403);
    expect(onPlatform.body.error).toMatchObject({ type: 'invalid_request_error', code: 'secret_key_required' });
    const onUserRoute = await api.call('GET', '/v1/conversations', asBackend());
    expect(onUserRoute.status).toBe(403);
    expect(onUserRoute.body.error).toMatchObject({ type: 'invalid_request_error', code: 'user_token_required' });
    // A user reads the account's directory, and changes nothing in it
    const bob = await api.call('GET', `/v1/contacts/${t.contactIds.bob}`, { token: t.token });
    expect(bob.body).toMatchObject({ id: t.contactIds.bob, username: 'bob' });
    expect((await api.call('PUT', `/v1/contacts/${t.contactIds.bob}`, { token: t.token, form: { username: 'x' } })).status).toBe(403);
    expect((await api.call('GET', '/v1/contacts', { token: 'sk_' + 'a'.repeat(43) })).status).toBe(401);
  });

  it('refuses a second contact with the same username in any case, and bad fields precisely', async () => {
    await aUser('frank');
    const again = await api.call('POST', '/v1/contacts', { ...asBackend(), json: { username: 'FRANK' } });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'username_taken', param: 'username' });
    // Case folded fully, and Unicode's equivalent forms are one name: ß and SS, é composed and decomposed, fullwidth letters
    for (const [first, second] of [
      ['Straße', 'STRASSE'],
      ['caf\u00e9', 'cafe\u0301'],
      ['ｆｕｌｌ', 'FULL'],
    ]) {
      expect((await api.call('POST', '/v1/contacts', { ...asBackend(), json: { username: first } })).status, first).toBe(201);
      const twin = await api.call('POST', '/v1/contacts', { ...asBackend(), json: { username: second } });
      expect([twin.status, twin.body.error?.code], second).toEqual([409, 'username_taken']);
    }
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'username'],
      [{ username: '' }, 'username'],
      [{ username: '   ' }, 'username'],
      [{ username: 'x'.repeat(65) }, 'username'],
      // Characters, not UTF-16 units: 65 emoji are too many (64 are taken, below); a NUL is no part of a name.
      [{ username: '😀'.repeat(65) }, 'username'],
      [{ username: 'x\u0000y' }, 'username'],
      [{ username: 'x\ny' }, 'username'],
      [{ username: 'gail', phone_number: '5550100' }, 'phone_number'],
      [{ username: 'gail', avatar_url: 'http://example.com/a.png' }, 'avatar_url'],
      [{ username: 'gail', nickname: 'g' }, 'nickname'],
    ];
    for (const [json, param] of cases) {
      const res = await api.call('POST', '/v1/contacts', { ...asBackend(), json });
      expect({ json, status: res.status, param: res.body.error.param }).toEqual({ json, status: 400, param });
    }
    const emoji = await api.call('POST', '/v1/contacts', { ...asBackend(), json: { username: '😀'.repeat(64) } });
    expect(emoji.status).toBe(201);
    const nul = await api.call('POST', '/v1/contacts', { ...asBackend(), json: { username: 'x\u0000y' } });
    expect(nul.body.error.message).toBe('Invalid username: must not contain control characters');
    const longAvatar = await api.call('POST', '/v1/contacts', {
      ...asBackend(),
      json: { username: 'gail', avatar_url: `https://example.com/${'a'.repeat(2048)}` },
    });
    expect(longAvatar.body.error.message).toBe('Invalid avatar_url: must be at most 2048 characters or empty, got a string');
    // A rename to a taken name is refused too; one to a free name frees the old one
    const gail = await aUser('gail');
    expect((await api.call('PUT', `/v1/contacts/${gail.id}`, { ...asBackend(), form: { username: 'Frank' } })).status).toBe(409);
    const renamed = await api.call('PUT', `/v1/contacts/${gail.id}`, { ...asBackend(), form: { username: 'gail2', phone_number: '' } });
    expect(renamed.body).toMatchObject({ username: 'gail2', phone_number: null });
    expect((await api.call('POST', '/v1/contacts', { ...asBackend(), form: { username: 'GAIL' } })).status).toBe(201);
  });

  it('lists contacts newest first with cursors, and replays an idempotent create', async () => {
    const headers = { 'Idempotency-Key': `contact-${transport}` };
    const first = await api.call('POST', '/v1/contacts', { ...asBackend(), form: { username: 'harry' }, headers });
    const replay = await api.call('POST', '/v1/contacts', { ...asBackend(), form: { username: 'harry' }, headers });
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.id).toBe(first.body.id);
    // A parameter given twice is refused rather than taken as one of its values
    const twice = await api.call('GET', '/v1/contacts?limit=1&limit=2', asBackend());
    expect(twice.status).toBe(400);
    expect(twice.body.error).toMatchObject({
      code: 'parameter_invalid',
      param: 'limit',
      message: 'Invalid limit: must be given once in the query',
    });
    const page = await api.call('GET', '/v1/contacts', { ...asBackend(), query: { limit: 1 } });
    expect(page.body).toMatchObject({ has_more: true, data: [{ id: first.body.id }] });
    const next = await api.call('GET', '/v1/contacts', { ...asBackend(), query: { limit: 100, starting_after: first.body.id } });
    expect(next.body.data.map((c: { username: string }) => c.username)).toEqual(expect.arrayContaining(['alice', 'bob', 'carol']));
    expect(next.body.data.map((c: { id: string }) => c.id)).not.toContain(first.body.id);
    const unknown = await api.call('GET', '/v1/contacts', { ...asBackend(), query: { starting_after: 'ct_01J00000000000000000000000' } });
    expect(unknown.status).toBe(400);
  });

  it('builds a group of 50 over HTTP that receives a message; a removed member gets nothing new and cannot send', async () => {
    // Given 50 users created over HTTP, in one group made with them
    const users = [];
    for (let i = 0; i < 50; i += 10) users.push(...(await Promise.all(Array.from({ length: 10 }, (_, j) => aUser(`team${i + j}`)))));
    const group = await api.call('POST', '/v1/groups', { ...asBackend(), json: { name: 'team', members: users.map((u) => u.id) } });
    expect(group.status).toBe(201);
    expect(group.body).toMatchObject({ id: expect.stringMatching(/^grp_/), name: 'team', member_count: 50 });
    const members = await api.call('GET', `/v1/groups/${group.body.id}/members`, { ...asBackend(), query: { limit: 100 } });
    expect(members.body.data.map((c: { id: string }) => c.id).sort()).toEqual(users.map((u) => u.id).sort());

    // When the first member sends to the group
    const [sender, leaver, stayer] = users;
    const conv = await api.call('POST', '/v1/conversations', { token: sender!.token, form: { group_id: group.body.id } });
    const first = await api.call('POST', '/v1/messages', { token: sender!.token, form: { conversation_id: conv.body.id, message: 'one' } });
    expect(first.status).toBe(201);
    // Then every other member has it
    const inboxes = await Promise.all(users.slice(1).map((u) => api.call('GET', '/v1/messages', { token: u.token })));
    for (const inbox of inboxes) expect(inbox.body.data.map((m: { id: string }) => m.id)).toEqual([first.body.id]);

    // When a member is removed, then another message reaches the others but not them, and they cannot send
    const removed = await api.call('DELETE', `/v1/groups/${group.body.id}/members/${leaver!.id}`, asBackend());
    expect(removed.body).toMatchObject({ id: group.body.id, member_count: 49 });
    const second = await api.call('POST', '/v1/messages', {
      token: sender!.token,
      form: { conversation_id: conv.body.id, message: 'two' },
    });
    const stayerInbox = await api.call('GET', '/v1/messages', { token: stayer!.token });
    expect(stayerInbox.body.data.map((m: { id: string }) => m.id)).toEqual([second.body.id, first.body.id]);
    const leaverInbox = await api.call('GET', '/v1/messages', { token: leaver!.token });
    expect(leaverInbox.body.data.map((m: { id: string }) => m.id)).toEqual([first.body.id]);
    const leaverConv = leaverInbox.body.data[0].conversation_id;
    const refused = await api.call('POST', '/v1/messages', { token: leaver!.token, form: { conversation_id: leaverConv, message: 'x' } });
    expect(refused.status).toBe(404);
    expect(refused.body.error.param).toBe('conversation_id');

    // Adding twice changes nothing; removing a non-member is a 404; an unknown contact is a 404 naming it
    const added = await api.call('POST', `/v1/groups/${group.body.id}/members`, { ...asBackend(), form: { contact_id: stayer!.id } });
    expect(added.body.member_count).toBe(49);
    expect((await api.call('DELETE', `/v1/groups/${group.body.id}/members/${leaver!.id}`, asBackend())).status).toBe(404);
    const ghost = await api.call('POST', `/v1/groups/${group.body.id}/members`, {
      ...asBackend(),
      form: { contact_id: 'ct_01J00000000000000000000000' },
    });
    expect(ghost.status).toBe(404);
    expect(ghost.body.error.param).toBe('contact_id');
  });

  it('refuses a group whose members are not all contacts of the account, and writes nothing', async () => {
    const other = await aTenant();
    const res = await api.call('POST', '/v1/groups', {
      ...asBackend(),
      json: { name: 'mixed', members: [t.contactIds.bob, other.contactIds.bob] },
    });
    expect(res.status).toBe(404);
    expect(res.body.error.param).toBe('members');
    const groups = await api.call('GET', '/v1/groups', { ...asBackend(), query: { limit: 100 } });
    expect(groups.body.data.map((g: { name: string }) => g.name)).not.toContain('mixed');
  });

  it('renames and deletes a group; a deleted group receives nothing', async () => {
    const group = await api.call('POST', '/v1/groups', {
      ...asBackend(),
      json: { name: 'tmp', members: [t.userContactId, t.contactIds.bob] },
    });
    const renamed = await api.call('PUT', `/v1/groups/${group.body.id}`, { ...asBackend(), form: { name: 'renamed' } });
    expect(renamed.body).toMatchObject({ name: 'renamed', member_count: 2 });
    const conv = await api.call('POST', '/v1/conversations', { token: t.token, form: { group_id: group.body.id } });
    expect(conv.status).toBe(201);
    const gone = await api.call('DELETE', `/v1/groups/${group.body.id}`, asBackend());
    expect(gone.body).toEqual({ id: group.body.id, deleted: true });
    expect((await api.call('GET', `/v1/groups/${group.body.id}`, asBackend())).status).toBe(404);
    const send = await api.call('POST', '/v1/messages', { token: t.token, form: { conversation_id: conv.body.id, message: 'anyone?' } });
    expect(send.status).toBe(404);
  });

  it('deletes a contact: its tokens refused, out of its groups, its views gone; others keep what it sent', async () => {
    const ivan = await aUser('ivan');
    const group = await api.call('POST', '/v1/groups', {
      ...asBackend(),
      json: { name: 'with-ivan', members: [ivan.id, t.userContactId] },
    });
    const conv = await api.call('POST', '/v1/conversations', { token: ivan.token, form: { contact_id: t.userContactId } });
    const sent = await api.call('POST', '/v1/messages', { token: ivan.token, form: { conversation_id: conv.body.id, message: 'bye' } });

    const deleted = await api.call('DELETE', `/v1/contacts/${ivan.id}`, asBackend());
    expect(deleted.body).toEqual({ id: ivan.id, deleted: true });

    expect((await api.call('GET', '/v1/conversations', { token: ivan.token })).status).toBe(401);
    expect((await api.call('GET', `/v1/contacts/${ivan.id}`, asBackend())).status).toBe(404);
    expect((await api.call('GET', `/v1/groups/${group.body.id}`, asBackend())).body.member_count).toBe(1);
    const aliceSees = await api.call('GET', `/v1/messages/${sent.body.id}`, { token: t.token });
    expect(aliceSees.body.contact).toMatchObject({ id: ivan.id, username: 'ivan' });
    // Its username is free again
    expect((await api.call('POST', '/v1/contacts', { ...asBackend(), form: { username: 'Ivan' } })).status).toBe(201);
  });

  it("refuses a send to a deleted contact's conversation with 410, and opens it no new view", async () => {
    // Given a conversation of alice's with judy, who is then deleted, and judy's own views purged
    const judy = await aUser('judy');
    const conv = await api.call('POST', '/v1/conversations', { token: t.token, form: { contact_id: judy.id } });
    const judysSide = { accountId: t.accountId, contactId: judy.id };
    expect((await api.call('DELETE', `/v1/contacts/${judy.id}`, asBackend())).status).toBe(200);
    await eventually(async () => (await conversationIdFor(judysSide, t.userContactId)) === undefined, { what: "judy's views purged" });
    // When alice sends into her conversation with judy
    const send = await api.call('POST', '/v1/messages', {
      token: t.token,
      form: { conversation_id: conv.body.id, message: 'still there?' },
    });
    // Then it is refused, naming the conversation, and judy has no conversation again
    expect(send.status).toBe(410);
    expect(send.body.error).toMatchObject({ code: 'contact_deleted', param: 'conversation_id' });
    expect(await conversationIdFor(judysSide, t.userContactId)).toBeUndefined();
    // And alice still reads her conversation as it was
    expect((await api.call('GET', `/v1/conversations/${conv.body.id}`, { token: t.token })).status).toBe(200);
  });

  it('shows the account: credits and the rate limit its requests get', async () => {
    const res = await api.call('GET', '/v1/account', asBackend());
    expect(res.body).toEqual({
      id: t.accountId,
      name: 'Demo',
      credits: null,
      rate_limit: { rate: expect.any(Number), burst: expect.any(Number) },
      created_at: expect.any(Number),
    });
  });
});

describe('a group of 1,000 created in one request', () => {
  it('answers with all its members within the function timeout, over HTTP', { timeout: 120_000 }, async () => {
    const api = await apiClient('messaging', 'http');
    const t = await aTenant();
    const ids: string[] = [];
    for (let i = 0; i < 1000; i += 50) {
      const batch = await Promise.all(
        Array.from({ length: 50 }, (_, j) => api.call('POST', '/v1/contacts', { token: t.secretKey, json: { username: `m${i + j}` } })),
      );
      ids.push(...batch.map((r) => r.body.id as string));
    }
    const started = Date.now();
    const group = await api.call('POST', '/v1/groups', { token: t.secretKey, json: { name: 'all', members: ids } });
    expect(group.status).toBe(201);
    expect(group.body.member_count).toBe(1000);
    const route = routes.find((r) => r.method === 'POST' && r.path === '/v1/groups')!;
    expect(Date.now() - started).toBeLessThan(route.timeoutSeconds! * 1000);
    const page = await api.call('GET', `/v1/groups/${group.body.id}/members`, { token: t.secretKey, query: { limit: 100 } });
    expect(page.body).toMatchObject({ has_more: true });
    expect(page.body.data).toHaveLength(100);
    await api.close();
  });
});
