import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimIdempotencyKey } from '#shared/data/idempotency';
import { fingerprintOf } from '#shared/http/idempotency';
import { db } from '#shared/db/client';
import { getContact, tombstoneContact } from '#shared/data/contacts';
import { countDynamoCalls } from '../steps/dynamodb-calls.ts';
import { aTenant, type Tenant } from '../steps/given.ts';
import { apiClient, transports, type ApiClient } from '../steps/when.ts';

describe.each(transports())('messages over %s', (transport) => {
  let api: ApiClient;
  let t: Tenant;
  let conversationId: string;
  const as = (tenant: Tenant) => ({ token: tenant.token });

  beforeAll(async () => {
    api = await apiClient('messaging', transport);
    t = await aTenant();
    conversationId = (await api.call('POST', '/v1/conversations', { ...as(t), form: { contact_id: t.contactIds.bob! } })).body.id;
  });
  afterAll(() => api.close());

  const send = (form: Record<string, string | string[]>, tenant = t, headers?: Record<string, string>, conversation = conversationId) =>
    api.call('POST', '/v1/messages', { ...as(tenant), form: { conversation_id: conversation, ...form }, headers });
  const update = (id: string, form: Record<string, string | string[]>) => api.call('PUT', `/v1/messages/${id}`, { ...as(t), form });

  it.skipIf(transport === 'remote')(
    'refuses a send from a contact deleted while its tokens are still being revoked, with 401',
    async () => {
      // Given alice's conversation with bob, and alice deleted as her delete does first (her tokens not yet revoked)
      const tenant = await aTenant();
      const conversation = (await api.call('POST', '/v1/conversations', { ...as(tenant), form: { contact_id: tenant.contactIds.bob! } }))
        .body;
      expect(await tombstoneContact((await getContact(tenant.accountId, tenant.userContactId))!, [])).toBe(true);
      // When her token sends
      const res = await send({ message: 'from beyond' }, tenant, undefined, conversation.id);
      // Then it is refused as a revoked credential, and bob received nothing
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expect(res.body.error).toMatchObject({ type: 'authentication_error' });
      expect((await api.call('GET', '/v1/conversations', { token: tenant.token2 })).body.data).toEqual([]);
    },
  );

  describe('send', () => {
    it('creates a message from the authenticated contact with empty extras, as docs/openapi.yaml says', async () => {
      const res = await send({ message: 'Hello Bob' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^msg_[0-9A-Z]{26}$/),
        conversation_id: conversationId,
        contact: {
          id: t.userContactId,
          username: 'alice',
          phone_number: '+15550100001',
          avatar_url: 'https://example.com/avatars/alice.png',
          last_active_at: expect.any(Number),
          created_at: expect.any(Number),
        },
        message: 'Hello Bob',
        reactions: [],
        attachments: [],
        read_at: null,
        created_at: expect.any(Number),
        updated_at: null,
      });
    });

    it("updates the conversation's last_active_at", async () => {
      const sent = await send({ message: 'ping' });
      const conv = await api.call('GET', `/v1/conversations/${conversationId}`, as(t));
      expect(conv.body.last_active_at).toBe(sent.body.created_at);
    });

    it('takes attachments in the indexed form and in JSON, with the same result', async () => {
      const form = await send({
        message: 'pics',
        'attachments[0][type]': 'image',
        'attachments[0][url]': 'https://cdn.example.com/a.png',
        'attachments[0][name]': 'a.png',
        'attachments[0][mime_type]': 'image/png',
        'attachments[0][size]': '1024',
        'attachments[1][type]': 'file',
        'attachments[1][url]': 'https://cdn.example.com/b.pdf',
      });
      const json = await api.call('POST', '/v1/messages', {
        ...as(t),
        json: {
          conversation_id: conversationId,
          message: 'pics',
          attachments: [
            { type: 'image', url: 'https://cdn.example.com/a.png', name: 'a.png', mime_type: 'image/png', size: 1024 },
            { type: 'file', url: 'https://cdn.example.com/b.pdf' },
          ],
        },
      });
      for (const res of [form, json]) {
        expect(res.status).toBe(201);
        expect(res.body.attachments).toEqual([
          {
            id: expect.stringMatching(/^att_/),
            type: 'image',
            url: 'https://cdn.example.com/a.png',
            name: 'a.png',
            mime_type: 'image/png',
            size: 1024,
            file_id: null,
          },
          {
            id: expect.stringMatching(/^att_/),
            type: 'file',
            url: 'https://cdn.example.com/b.pdf',
            name: null,
            mime_type: null,
            size: null,
            file_id: null,
          },
        ]);
      }
    });

    it.each([
      [{ message: '' }, 'message'],
      [{ message: '   ' }, 'message'],
      [{ message: 'x'.repeat(4097) }, 'message'],
      [{ conversation_id: '', message: 'hi' }, 'conversation_id'],
      [
        { message: 'hi', 'attachments[0][type]': 'image', 'attachments[0][url]': 'http://insecure.example.com/a.png' },
        'attachments[0][url]',
      ],
      [{ message: 'hi', 'attachments[0][type]': 'hologram', 'attachments[0][url]': 'https://x.example.com/a' }, 'attachments[0][type]'],
      [{ message: 'hi', 'attachments[0][url]': 'https://x.example.com/a' }, 'attachments[0][type]'],
      [
        {
          message: 'hi',
          'attachments[0][type]': 'file',
          'attachments[0][url]': 'https://x.example.com/a',
          'attachments[0][colour]': 'red',
        },
        'attachments[0][colour]',
      ],
      [{ message: 'hi', read_at: '5' }, 'read_at'],
      [
        {
          message: 'hi',
          'attachments[0][type]': 'file',
          'attachments[0][url]': 'https://x.example.com/a',
          'attachments[0][name]': 'a\u0001b',
        },
        'attachments[0][name]',
      ],
    ])('rejects %j with 400 naming the parameter', async (form, param) => {
      const res = await send(form);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param });
    });

    it('needs conversation_id and message', async () => {
      const res = await api.call('POST', '/v1/messages', { ...as(t), form: { message: 'orphan' } });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'parameter_missing', param: 'conversation_id' });
      const noText = await api.call('POST', '/v1/messages', { ...as(t), form: { conversation_id: conversationId } });
      expect(noText.body.error.param).toBe('message');
    });

    it('accepts exactly 4096 characters', async () => {
      expect((await send({ message: '€'.repeat(4096) })).status).toBe(201);
    });

    it('rejects more than ten attachments', async () => {
      const form: Record<string, string> = { message: 'many' };
      for (let i = 0; i < 11; i++) {
        form[`attachments[${i}][type]`] = 'file';
        form[`attachments[${i}][url]`] = `https://x.example.com/${i}`;
      }
      const res = await send(form);
      expect(res.status).toBe(400);
      expect(res.body.error.param).toBe('attachments');
    });

    it('404s an unknown conversation, naming conversation_id', async () => {
      const res = await send({ conversation_id: 'conv_01JD0000000000000000000000', message: 'hi' });
      expect(res.status).toBe(404);
      expect(res.body.error.param).toBe('conversation_id');
    });
  });

  describe('Idempotency-Key', () => {
    it('replays the first result and creates nothing new', async () => {
      const tenant = await aTenant();
      const conv = await api.call('POST', '/v1/conversations', { ...as(tenant), form: { contact_id: tenant.contactIds.bob! } });
      const post = () =>
        api.call('POST', '/v1/messages', {
          ...as(tenant),
          form: { conversation_id: conv.body.id, message: 'once' },
          headers: { 'Idempotency-Key': 'order-42' },
        });
      const first = await post();
      const second = await post();
      expect(first.status).toBe(201);
      expect(second.status).toBe(201);
      expect(second.body).toEqual(first.body);
      expect(second.headers['idempotent-replayed']).toBe('true');
      const list = await api.call('GET', '/v1/messages', { ...as(tenant), query: { conversation_id: conv.body.id } });
      expect(list.body.data).toHaveLength(1);
    });

    it('answers 422 when the key is reused with other parameters', async () => {
      await send({ message: 'a' }, t, { 'Idempotency-Key': 'reuse-me' });
      const res = await send({ message: 'b' }, t, { 'Idempotency-Key': 'reuse-me' });
      expect(res.status).toBe(422);
      expect(res.body.error.type).toBe('invalid_request_error');
    });

    it('answers 409 while the first request with the key is still running', async () => {
      const form = { conversation_id: conversationId, message: 'slow' };
      const user = { accountId: t.accountId, contactId: t.userContactId };
      await claimIdempotencyKey(t.accountId, 'in-flight', fingerprintOf('POST', '/v1/messages', user, form));
      const res = await send({ message: 'slow' }, t, { 'Idempotency-Key': 'in-flight' });
      expect(res.status).toBe(409);
    });

    it('scopes keys to the account: another account may use the same key, another user of the account may not', async () => {
      // Given alice sent under a key
      const tenant = await aTenant();
      const aliceConv = await api.call('POST', '/v1/conversations', { ...as(tenant), form: { contact_id: tenant.contactIds.bob! } });
      const first = await api.call('POST', '/v1/messages', {
        ...as(tenant),
        form: { conversation_id: aliceConv.body.id, message: 'same words' },
        headers: { 'Idempotency-Key': 'shared-key' },
      });
      expect(first.status).toBe(201);

      // When bob, of the same account, sends the same words under that key in his view of the conversation
      const bobConv = await api.call('POST', '/v1/conversations', { token: tenant.token2, form: { contact_id: tenant.contactIds.alice! } });
      const sameAccount = await api.call('POST', '/v1/messages', {
        token: tenant.token2,
        form: { conversation_id: bobConv.body.id, message: 'same words' },
        headers: { 'Idempotency-Key': 'shared-key' },
      });
      // Then the key is taken: 422, and nothing of alice's answer is shown to him
      expect(sameAccount.status).toBe(422);
      expect(sameAccount.body.error.code).toBe('idempotency_key_reused');
      expect(sameAccount.text).not.toContain(first.body.id);

      // When a user of another account uses the key
      const other = await aTenant();
      const conv = await api.call('POST', '/v1/conversations', { ...as(other), form: { contact_id: other.contactIds.bob! } });
      const res = await api.call('POST', '/v1/messages', {
        ...as(other),
        form: { conversation_id: conv.body.id, message: 'theirs' },
        headers: { 'Idempotency-Key': 'shared-key' },
      });
      // Then it is theirs to use
      expect(res.status).toBe(201);
      expect(res.body.message).toBe('theirs');
    });

    it('rejects a key over 255 characters', async () => {
      const res = await send({ message: 'x' }, t, { 'Idempotency-Key': 'k'.repeat(256) });
      expect(res.status).toBe(400);
    });
  });

  describe('get, update, delete', () => {
    it('gets a message and 404s unknown ids', async () => {
      const sent = await send({ message: 'fetch me' });
      const got = await api.call('GET', `/v1/messages/${sent.body.id}`, as(t));
      expect(got.status).toBe(200);
      expect(got.body).toEqual(sent.body);
      expect((await api.call('GET', '/v1/messages/msg_01JD0000000000000000000000', as(t))).status).toBe(404);
    });

    it('edits the text and sets updated_at', async () => {
      const sent = await send({ message: 'typo' });
      const res = await update(sent.body.id, { message: 'fixed' });
      expect(res.status).toBe(200);
      expect(res.body.message).toBe('fixed');
      expect(res.body.updated_at).toEqual(expect.any(Number));
    });

    it('adds reactions as set unions in first-added order, and removes them with empty values', async () => {
      const { body: msg } = await send({ message: 'react' });
      let res = await update(msg.id, { 'reactions[thumbsup][]': ['alice', 'bob'], 'reactions[heart][]': 'carol' });
      expect(res.body.reactions).toEqual([{ thumbsup: ['alice', 'bob'] }, { heart: ['carol'] }]);
      res = await update(msg.id, { 'reactions[thumbsup][]': ['bob', 'dave'], 'reactions[🎉][]': 'erin' });
      expect(res.body.reactions).toEqual([{ thumbsup: ['alice', 'bob', 'dave'] }, { heart: ['carol'] }, { '🎉': ['erin'] }]);
      res = await update(msg.id, { 'reactions[heart]': '' });
      expect(res.body.reactions).toEqual([{ thumbsup: ['alice', 'bob', 'dave'] }, { '🎉': ['erin'] }]);
      res = await update(msg.id, { reactions: '' });
      expect(res.body.reactions).toEqual([]);
    });

    it('takes reaction names made of digits in a form, in the order sent, as the JSON array form does', async () => {
      // Given a message
      const { body: msg } = await send({ message: 'digits' });
      // When reactions named 100 and 0 are added in a form among another name
      let res = await update(msg.id, { 'reactions[thumbsup][]': 'bob', 'reactions[100][]': ['carol', 'dave'], 'reactions[0][]': 'erin' });
      // Then they are reactions of those names, in the order sent
      expect(res.status, res.text).toBe(200);
      expect(res.body.reactions).toEqual([{ thumbsup: ['bob'] }, { '100': ['carol', 'dave'] }, { '0': ['erin'] }]);
      // And JSON's array form adds the same way
      res = await api.call('PUT', `/v1/messages/${msg.id}`, { ...as(t), json: { reactions: [{ '7': ['frank'] }, { wave: ['gina'] }] } });
      expect(res.body.reactions.map((r: object) => Object.keys(r)[0])).toEqual(['thumbsup', '100', '0', '7', 'wave']);
      // And an empty value removes one of them, as for any name
      res = await update(msg.id, { 'reactions[100]': '' });
      expect(res.body.reactions).toEqual([{ thumbsup: ['bob'] }, { '0': ['erin'] }, { '7': ['frank'] }, { wave: ['gina'] }]);
    });

    it('takes reactions as JSON in the documented array form', async () => {
      const { body: msg } = await send({ message: 'json react' });
      const res = await api.call('PUT', `/v1/messages/${msg.id}`, {
        ...as(t),
        json: { reactions: [{ thumbsup: ['alice'] }, { 'red-heart': ['bob'] }] },
      });
      expect(res.body.reactions).toEqual([{ thumbsup: ['alice'] }, { 'red-heart': ['bob'] }]);
    });

    it('keeps every one of 50 concurrent reaction edits: new names, one name by many, and removals', async () => {
      const { body: msg } = await send({ message: 'race' });
      const removable = Array.from({ length: 10 }, (_, i) => `r${i}`);
      await update(msg.id, Object.fromEntries(removable.map((name) => [`reactions[${name}][]`, 'seed'])));
      const edits = [
        ...Array.from({ length: 20 }, (_, i) => ({ [`reactions[n${i}][]`]: `u${i}` })),
        ...Array.from({ length: 20 }, (_, i) => ({ 'reactions[wave][]': `w${i}` })),
        ...removable.map((name) => ({ [`reactions[${name}]`]: '' })),
      ];
      const results = await Promise.all(edits.map((form) => update(msg.id, form)));
      expect(results.map((r) => r.status)).toEqual(edits.map(() => 200));

      const got = await api.call('GET', `/v1/messages/${msg.id}`, as(t));
      const reactions = Object.assign({}, ...got.body.reactions) as Record<string, string[]>;
      expect(got.body.reactions).toHaveLength(21);
      expect(Object.keys(reactions).sort()).toEqual(['wave', ...Array.from({ length: 20 }, (_, i) => `n${i}`)].sort());
      for (let i = 0; i < 20; i++) expect(reactions[`n${i}`]).toEqual([`u${i}`]);
      expect([...reactions.wave!].sort()).toEqual(Array.from({ length: 20 }, (_, i) => `w${i}`).sort());
    });

    it('keeps concurrent text edits, attachments and read marks apart: the last text wins, the rest all land', async () => {
      const { body: msg } = await send({ message: 'before' });
      const results = await Promise.all([
        update(msg.id, { message: 'one' }),
        update(msg.id, { message: 'two' }),
        update(msg.id, { 'attachments[0][type]': 'file', 'attachments[0][url]': 'https://x.example.com/a' }),
        update(msg.id, { 'attachments[0][type]': 'file', 'attachments[0][url]': 'https://x.example.com/b' }),
        // bob, the recipient, reads it meanwhile
        api.call('PUT', `/v1/messages/${msg.id}`, { token: t.token2, form: { read: 'true' } }),
        update(msg.id, { 'reactions[ok][]': 'alice' }),
      ]);
      expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
      const { body } = await api.call('GET', `/v1/messages/${msg.id}`, as(t));
      expect(['one', 'two']).toContain(body.message);
      expect(body.attachments.map((a: { url: string }) => a.url).sort()).toEqual(['https://x.example.com/a', 'https://x.example.com/b']);
      // In the sender's view, read_at is when bob first read it
      expect(body.read_at).toEqual(expect.any(Number));
      expect(body.reactions).toEqual([{ ok: ['alice'] }]);
      const bobs = await api.call('GET', `/v1/messages/${msg.id}`, { token: t.token2 });
      expect(bobs.body).toMatchObject({ message: body.message, read_at: body.read_at, reactions: [{ ok: ['alice'] }] });
    });

    it.each([['reactions[not valid!][]'], ['reactions[' + 'x'.repeat(33) + '][]'], ['reactions[👍👍][]']])(
      'rejects the reaction name in %s',
      async (key) => {
        const { body: msg } = await send({ message: 'bad react' });
        const res = await update(msg.id, { [key]: 'alice' });
        expect(res.status).toBe(400);
        expect(res.body.error.param).toMatch(/^reactions/);
      },
    );

    it('caps a message at 50 reaction names, in one request or over several', async () => {
      const { body: msg } = await send({ message: 'crowded' });
      const form = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`reactions[r${i}][]`, 'alice']));
      const res = await update(msg.id, form);
      expect(res.status).toBe(400);
      expect(res.body.error.param).toBe('reactions');
      const ok = await update(msg.id, Object.fromEntries(Object.entries(form).slice(0, 50)));
      expect(ok.body.reactions).toHaveLength(50);
      const more = await update(msg.id, { 'reactions[r50][]': 'alice' });
      expect(more.status).toBe(400);
      expect(more.body.error).toMatchObject({ code: 'parameter_invalid', param: 'reactions' });
      // Existing names still take contacts, and a removal makes room.
      expect((await update(msg.id, { 'reactions[r0][]': 'bob' })).status).toBe(200);
      const swap = await api.call('PUT', `/v1/messages/${msg.id}`, { ...as(t), json: { reactions: [{ r1: '' }, { r50: ['alice'] }] } });
      expect(swap.status).toBe(200);
      expect(swap.body.reactions).toHaveLength(50);
      expect(swap.body.reactions.at(-1)).toEqual({ r50: ['alice'] });
    });

    it('caps a reaction at 1,000 contacts, in one request or over several', async () => {
      const { body: msg } = await send({ message: 'popular' });
      const putJson = (reactions: unknown) => api.call('PUT', `/v1/messages/${msg.id}`, { ...as(t), json: { reactions } });
      const crowd = Array.from({ length: 1001 }, (_, i) => `c${i}`);
      const tooMany = await putJson({ wave: crowd });
      expect(tooMany.status).toBe(400);
      expect(tooMany.body.error.param).toBe('reactions[wave]');
      // And a form of 1,001 names the count as JSON does
      const tooManyInForm = await update(msg.id, { 'reactions[wave][]': crowd });
      expect(tooManyInForm.status).toBe(400);
      expect(tooManyInForm.body.error).toMatchObject({
        param: 'reactions[wave]',
        message: expect.stringContaining('at most 1000 contacts'),
      });
      const full = await putJson({ wave: crowd.slice(0, 1000) });
      expect(full.status).toBe(200);
      expect(full.body.reactions[0].wave).toHaveLength(1000);
      const more = await update(msg.id, { 'reactions[wave][]': ['c0', 'one-more'] });
      expect(more.status).toBe(400);
      expect(more.body.error).toMatchObject({ code: 'parameter_invalid', param: 'reactions[wave]' });
      // Contacts already there are no change at all.
      const same = await update(msg.id, { 'reactions[wave][]': ['c0', 'c999'] });
      expect(same.status).toBe(200);
      expect(same.body.updated_at).toBe(full.body.updated_at);
    });

    it('appends attachments and clears them with an empty value', async () => {
      const { body: msg } = await send({
        message: 'files',
        'attachments[0][type]': 'file',
        'attachments[0][url]': 'https://x.example.com/1',
      });
      let res = await update(msg.id, { 'attachments[0][type]': 'audio', 'attachments[0][url]': 'https://x.example.com/2.mp3' });
      expect(res.body.attachments.map((a: { url: string }) => a.url)).toEqual(['https://x.example.com/1', 'https://x.example.com/2.mp3']);
      res = await update(msg.id, { attachments: '' });
      expect(res.body.attachments).toEqual([]);
    });

    it('marks a message read once for its reader; later reads keep the first time', async () => {
      const { body: msg } = await send({ message: 'read me' });
      const asBob = { token: t.token2 };
      const first = await api.call('PUT', `/v1/messages/${msg.id}`, { ...asBob, form: { read: 'true' } });
      expect(first.status).toBe(200);
      expect(first.body.read_at).toEqual(expect.any(Number));
      // Time must pass, with nothing to watch: the next read falls in a later second of the server's clock (read_at is in
      // seconds, and the server may be another machine), so a read that replaced the first time would show.
      await new Promise((r) => setTimeout(r, 1100));
      const again = await api.call('PUT', `/v1/messages/${msg.id}`, { ...asBob, form: { read: 'true' } });
      expect(again.body.read_at).toBe(first.body.read_at);
      // A read is the reader's: it changes nothing of the message itself
      expect(again.body.updated_at).toBeNull();
      expect((await api.call('GET', `/v1/messages/${msg.id}`, as(t))).body.read_at).toBe(first.body.read_at);
    });

    it('leaves updated_at alone when nothing changes', async () => {
      const { body: msg } = await send({ message: 'same' });
      const res = await update(msg.id, {});
      expect(res.status).toBe(200);
      expect(res.body.updated_at).toBeNull();
    });

    it('deletes a message, clearing a pin that pointed at it', async () => {
      const { body: msg } = await send({ message: 'pin then delete' });
      await api.call('PUT', `/v1/conversations/${conversationId}`, { ...as(t), form: { pinned_message_id: msg.id } });
      const res = await api.call('DELETE', `/v1/messages/${msg.id}`, as(t));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ id: msg.id, deleted: true });
      expect((await api.call('GET', `/v1/messages/${msg.id}`, as(t))).status).toBe(404);
      expect((await api.call('DELETE', `/v1/messages/${msg.id}`, as(t))).status).toBe(404);
      const conv = await api.call('GET', `/v1/conversations/${conversationId}`, as(t));
      expect(conv.body.pinned_message_id).toBeNull();
    });

    it.skipIf(transport === 'remote')('clears a pin written while its message was being deleted', async () => {
      // Given a message, and its pin's write held back until the message's delete has finished
      const { body: msg } = await send({ message: 'pinned as it goes' });
      const path = `/v1/conversations/${conversationId}`;
      let deleted: Promise<unknown> | undefined;
      const name = 'delete-before-pin';
      db().middlewareStack.add(
        (next, context) => async (args) => {
          const values = JSON.stringify((args.input as { ExpressionAttributeValues?: unknown }).ExpressionAttributeValues ?? {});
          if (!deleted && context.commandName === 'UpdateItemCommand' && values.includes(msg.id) && !values.includes('"NULL"')) {
            deleted = api.call('DELETE', `/v1/messages/${msg.id}`, as(t));
            expect(((await deleted) as { status: number }).status).toBe(200);
          }
          return next(args);
        },
        { step: 'initialize', name },
      );
      // When the pin is asked for
      const pin = await api
        .call('PUT', path, { ...as(t), form: { pinned_message_id: msg.id } })
        .finally(() => db().middlewareStack.remove(name));
      // Then the delete ran in between, and the pin is gone as the delete would have cleared it
      expect(deleted).toBeDefined();
      expect(pin.status).toBe(200);
      expect(pin.body.pinned_message_id).toBeNull();
      expect((await api.call('GET', path, as(t))).body.pinned_message_id).toBeNull();
    });

    it('404s updates of unknown messages', async () => {
      const res = await update('msg_01JD0000000000000000000000', { message: 'x' });
      expect(res.status).toBe(404);
    });
  });

  describe('list', () => {
    let tenant: Tenant;
    let convA: string;
    let convB: string;
    const inA: string[] = [];
    const all: string[] = [];

    beforeAll(async () => {
      tenant = await aTenant();
      convA = (await api.call('POST', '/v1/conversations', { ...as(tenant), form: { contact_id: tenant.contactIds.bob! } })).body.id;
      convB = (await api.call('POST', '/v1/conversations', { ...as(tenant), form: { group_id: tenant.groupId } })).body.id;
      for (let i = 0; i < 14; i++) {
        const conversation_id = i % 3 === 0 ? convB : convA;
        const res = await api.call('POST', '/v1/messages', { ...as(tenant), form: { conversation_id, message: `n${i}` } });
        all.unshift(res.body.id);
        if (conversation_id === convA) inA.unshift(res.body.id);
      }
    });

    const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((m) => m.id);

    it('lists all messages newest first, ten by default', async () => {
      const res = await api.call('GET', '/v1/messages', as(tenant));
      expect(res.status).toBe(200);
      expect(ids(res)).toEqual(all.slice(0, 10));
      expect(res.body.has_more).toBe(true);
    });

    it('limits to one conversation', async () => {
      const res = await api.call('GET', '/v1/messages', { ...as(tenant), query: { conversation_id: convA, limit: 100 } });
      expect(ids(res)).toEqual(inA);
      expect(res.body.has_more).toBe(false);
    });

    it("reads one conversation with a single Query that also proves the conversation is the caller's", async () => {
      if (transport === 'remote') return;
      const { result, calls } = await countDynamoCalls(() =>
        api.call('GET', '/v1/messages', { ...as(tenant), query: { conversation_id: convA, limit: 100 } }),
      );
      expect(ids(result)).toEqual(inA);
      // The token, then the Query (conversation item and the page's entries, which carry a one-to-one thread's
      // messages); the senders come from the contact cache, read by the first page of the container
      // (at most one batch read).
      expect(calls.map((c) => c.command).filter((c) => c !== 'BatchGetItemCommand')).toEqual(['GetItemCommand', 'QueryCommand']);
      expect(calls.filter((c) => c.command === 'BatchGetItemCommand').length).toBeLessThanOrEqual(1);
      const again = await countDynamoCalls(() =>
        api.call('GET', '/v1/messages', { ...as(tenant), query: { conversation_id: convA, limit: 100 } }),
      );
      expect(again.calls.map((c) => c.command)).toEqual(['GetItemCommand', 'QueryCommand']);
    });

    it('pages both ways with cursors', async () => {
      const next = await api.call('GET', '/v1/messages', { ...as(tenant), query: { limit: 4, starting_after: all[3]! } });
      expect(ids(next)).toEqual(all.slice(4, 8));
      const prev = await api.call('GET', '/v1/messages', { ...as(tenant), query: { limit: 4, ending_before: all[8]! } });
      expect(ids(prev)).toEqual(all.slice(4, 8));
      expect(prev.body.has_more).toBe(true);
    });

    it('rejects a cursor from another conversation', async () => {
      const outside = all.find((id) => !inA.includes(id))!;
      const res = await api.call('GET', '/v1/messages', { ...as(tenant), query: { conversation_id: convA, starting_after: outside } });
      expect(res.status).toBe(400);
      expect(res.body.error.param).toBe('starting_after');
    });

    it('404s an unknown conversation filter', async () => {
      const res = await api.call('GET', '/v1/messages', { ...as(tenant), query: { conversation_id: 'conv_01JD0000000000000000000000' } });
      expect(res.status).toBe(404);
      expect(res.body.error.param).toBe('conversation_id');
    });

    it.each([[{ limit: 0 }], [{ limit: 101 }], [{ convo: 'x' }], [{ starting_after: 'a', ending_before: 'b' }]])(
      'rejects %j',
      async (query) => {
        expect((await api.call('GET', '/v1/messages', { ...as(tenant), query })).status).toBe(400);
      },
    );
  });
});
