import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aTenant, type Tenant } from '../steps/given.ts';
import { apiClient, transports, type ApiClient } from '../steps/when.ts';

describe.each(transports())('conversations over %s', (transport) => {
  let api: ApiClient;
  let t: Tenant;
  const as = (tenant: Tenant) => ({ token: tenant.token });

  beforeAll(async () => {
    api = await apiClient('messaging', transport);
    t = await aTenant();
  });
  afterAll(() => api.close());

  const open = (tenant: Tenant, form: Record<string, string>) => api.call('POST', '/v1/conversations', { ...as(tenant), form });

  it('creates a contact conversation with the defaults of docs/openapi.yaml', async () => {
    const tenant = await aTenant();
    const res = await open(tenant, { contact_id: tenant.contactIds.bob! });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^conv_[0-9A-Z]{26}$/),
      contact_id: tenant.contactIds.bob,
      group_id: null,
      pinned_message_id: null,
      is_pinned: false,
      is_muted: false,
      last_active_at: null,
      last_opened_at: null,
      created_at: expect.any(Number),
      archived_at: null,
      unread_count: 0,
    });
    expect(Math.abs(res.body.created_at - Date.now() / 1000)).toBeLessThan(60);
    expect(res.headers['x-request-id']).toBeTruthy();
  });

  it('returns the existing conversation with 200 when opened again, in JSON too', async () => {
    const tenant = await aTenant();
    const first = await open(tenant, { contact_id: tenant.contactIds.carol! });
    const again = await api.call('POST', '/v1/conversations', { ...as(tenant), json: { contact_id: tenant.contactIds.carol } });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
  });

  it('opens one conversation per contact even under concurrent requests', async () => {
    const tenant = await aTenant();
    const results = await Promise.all(Array.from({ length: 5 }, () => open(tenant, { contact_id: tenant.contactIds.bob! })));
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
  });

  it('creates a group conversation', async () => {
    const res = await open(t, { group_id: t.groupId });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ group_id: t.groupId, contact_id: null });
  });

  it.each([
    [{}, 'contact_id', 'parameter_missing'],
    [{ contact_id: 'ct_x', group_id: 'grp_x' }, 'group_id', 'parameter_invalid'],
  ])('needs exactly one of contact_id and group_id (%j)', async (form, param, code) => {
    const res = await open(t, form as Record<string, string>);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code, param });
  });

  it('replays an opening under an Idempotency-Key: the first answer, 201, marked replayed', async () => {
    // Given a conversation opened under a key
    const tenant = await aTenant();
    const headers = { 'Idempotency-Key': `open-${transport}` };
    const first = await api.call('POST', '/v1/conversations', { ...as(tenant), form: { contact_id: tenant.contactIds.carol! }, headers });
    // When the request is sent again with the key, and once with it but another contact
    const replay = await api.call('POST', '/v1/conversations', { ...as(tenant), form: { contact_id: tenant.contactIds.carol! }, headers });
    const other = await api.call('POST', '/v1/conversations', { ...as(tenant), form: { contact_id: tenant.contactIds.bob! }, headers });
    // Then the replay is the first answer, and the other parameters are refused
    expect(first.status).toBe(201);
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect(other.status).toBe(422);
  });

  it('refuses a conversation with oneself, naming contact_id', async () => {
    const res = await open(t, { contact_id: t.userContactId });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param: 'contact_id' });
  });

  it('answers 404 naming the parameter for an unknown contact or group', async () => {
    const contact = await open(t, { contact_id: 'ct_01JD0000000000000000000000' });
    expect(contact.status).toBe(404);
    expect(contact.body.error).toMatchObject({ type: 'invalid_request_error', param: 'contact_id' });
    const group = await open(t, { group_id: 'grp_nope' });
    expect(group.status).toBe(404);
    expect(group.body.error.param).toBe('group_id');
  });

  it('rejects an unknown body parameter by name', async () => {
    const res = await open(t, { contact_id: t.contactIds.bob!, is_pined: 'true' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'parameter_unknown', param: 'is_pined' });
  });

  it('gets a conversation, and 404s an unknown id', async () => {
    const created = await open(t, { contact_id: t.contactIds.bob! });
    const got = await api.call('GET', `/v1/conversations/${created.body.id}`, as(t));
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created.body);
    const missing = await api.call('GET', '/v1/conversations/conv_01JD0000000000000000000000', as(t));
    expect(missing.status).toBe(404);
    expect(missing.body.error.type).toBe('invalid_request_error');
  });

  describe('update', () => {
    it('pins, mutes, archives and unarchives with form booleans and timestamps', async () => {
      const tenant = await aTenant();
      const { body: conv } = await open(tenant, { contact_id: tenant.contactIds.bob! });
      const path = `/v1/conversations/${conv.id}`;
      const pinned = await api.call('PUT', path, { ...as(tenant), form: { is_pinned: 'true', is_muted: '1', archived_at: 1700000000 } });
      expect(pinned.status).toBe(200);
      expect(pinned.body).toMatchObject({ is_pinned: true, is_muted: true, archived_at: 1700000000 });
      const restored = await api.call('PUT', path, { ...as(tenant), form: { archived_at: '', is_muted: 'false' } });
      expect(restored.body).toMatchObject({ is_pinned: true, is_muted: false, archived_at: null });
      const viaJson = await api.call('PUT', path, { ...as(tenant), json: { is_pinned: false, archived_at: null } });
      expect(viaJson.body).toMatchObject({ is_pinned: false, archived_at: null });
    });

    it('pins a message of the conversation, clears the pin with an empty value, refuses others', async () => {
      const tenant = await aTenant();
      const { body: conv } = await open(tenant, { contact_id: tenant.contactIds.bob! });
      const { body: other } = await open(tenant, { contact_id: tenant.contactIds.carol! });
      const send = (conversation_id: string) =>
        api.call('POST', '/v1/messages', { ...as(tenant), form: { conversation_id, message: 'hi' } });
      const { body: mine } = await send(conv.id);
      const { body: theirs } = await send(other.id);
      const path = `/v1/conversations/${conv.id}`;

      const pin = await api.call('PUT', path, { ...as(tenant), form: { pinned_message_id: mine.id } });
      expect(pin.body.pinned_message_id).toBe(mine.id);
      const wrong = await api.call('PUT', path, { ...as(tenant), form: { pinned_message_id: theirs.id } });
      expect(wrong.status).toBe(400);
      expect(wrong.body.error.param).toBe('pinned_message_id');
      const clear = await api.call('PUT', path, { ...as(tenant), form: { pinned_message_id: '' } });
      expect(clear.body.pinned_message_id).toBeNull();
    });

    it('applies concurrent mute, pin and archive, and lists the conversation by its final state', async () => {
      const tenant = await aTenant();
      const { body: conv } = await open(tenant, { contact_id: tenant.contactIds.bob! });
      const path = `/v1/conversations/${conv.id}`;
      const forms: Record<string, string>[] = [
        { is_muted: 'true' },
        { is_pinned: 'true' },
        { archived_at: '1700000000' },
        { opened: 'true' },
      ];
      const results = await Promise.all(forms.map((form) => api.call('PUT', path, { ...as(tenant), form })));
      expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      const { body } = await api.call('GET', path, as(tenant));
      expect(body).toMatchObject({ is_muted: true, is_pinned: true, archived_at: 1700000000, last_opened_at: expect.any(Number) });
      const list = (query: Record<string, string>) =>
        api.call('GET', '/v1/conversations', { ...as(tenant), query }).then((r) => r.body.data.map((c: { id: string }) => c.id));
      expect(await list({ muted: 'true', pinned: 'true', archived: 'true' })).toEqual([conv.id]);
      expect(await list({ muted: 'false' })).toEqual([]);
      expect(await list({ pinned: 'false' })).toEqual([]);
      expect(await list({ archived: 'false' })).toEqual([]);
    });

    it('records opening with opened=true', async () => {
      const { body: conv } = await open(t, { group_id: t.groupId });
      const res = await api.call('PUT', `/v1/conversations/${conv.id}`, { ...as(t), form: { opened: 'true' } });
      expect(res.body.last_opened_at).toEqual(expect.any(Number));
    });

    it.each([
      [{ is_pinned: 'yes' }, 'is_pinned'],
      [{ archived_at: 'yesterday' }, 'archived_at'],
      [{ archived_at: '-5' }, 'archived_at'],
      [{ muted: 'true' }, 'muted'],
    ])('rejects %j', async (form, param) => {
      const { body: conv } = await open(t, { contact_id: t.contactIds.bob! });
      const res = await api.call('PUT', `/v1/conversations/${conv.id}`, { ...as(t), form });
      expect(res.status).toBe(400);
      expect(res.body.error.param).toBe(param);
    });

    it('404s an unknown conversation', async () => {
      const res = await api.call('PUT', '/v1/conversations/conv_01JD0000000000000000000000', { ...as(t), form: { is_muted: 'true' } });
      expect(res.status).toBe(404);
    });
  });

  describe('list', () => {
    let tenant: Tenant;
    const ids: string[] = [];

    beforeAll(async () => {
      tenant = await aTenant();
      // 13 conversations: one per fresh contact, so list order is creation order.
      const { createContact } = await import('#shared/data/contacts');
      for (let i = 0; i < 13; i++) {
        const contact = await createContact({ accountId: tenant.accountId, username: `c${i}` });
        const res = await open(tenant, { contact_id: contact.id });
        ids.unshift(res.body.id); // newest first
      }
      await api.call('PUT', `/v1/conversations/${ids[0]}`, { ...as(tenant), form: { is_muted: 'true', is_pinned: 'true' } });
      await api.call('PUT', `/v1/conversations/${ids[1]}`, { ...as(tenant), form: { archived_at: '1700000000' } });
    });

    it('returns ten newest first by default, with has_more (rules 1 and 2)', async () => {
      const res = await api.call('GET', '/v1/conversations', as(tenant));
      expect(res.status).toBe(200);
      expect(res.body.has_more).toBe(true);
      expect(res.body.data.map((c: { id: string }) => c.id)).toEqual(ids.slice(0, 10));
    });

    it('pages forward with starting_after and back with ending_before', async () => {
      const second = await api.call('GET', '/v1/conversations', { ...as(tenant), query: { limit: 5, starting_after: ids[4]! } });
      expect(second.body.data.map((c: { id: string }) => c.id)).toEqual(ids.slice(5, 10));
      expect(second.body.has_more).toBe(true);
      const last = await api.call('GET', '/v1/conversations', { ...as(tenant), query: { limit: 5, starting_after: ids[9]! } });
      expect(last.body.data.map((c: { id: string }) => c.id)).toEqual(ids.slice(10));
      expect(last.body.has_more).toBe(false);
      const back = await api.call('GET', '/v1/conversations', { ...as(tenant), query: { limit: 3, ending_before: ids[5]! } });
      expect(back.body.data.map((c: { id: string }) => c.id)).toEqual(ids.slice(2, 5));
      expect(back.body.has_more).toBe(true);
      const top = await api.call('GET', '/v1/conversations', { ...as(tenant), query: { limit: 3, ending_before: ids[2]! } });
      expect(top.body.data.map((c: { id: string }) => c.id)).toEqual(ids.slice(0, 2));
      expect(top.body.has_more).toBe(false);
    });

    it('keeps pages stable while new conversations are created', async () => {
      const first = await api.call('GET', '/v1/conversations', { ...as(tenant), query: { limit: 4 } });
      const { createContact } = await import('#shared/data/contacts');
      const newcomer = await createContact({ accountId: tenant.accountId, username: 'late' });
      const created = await open(tenant, { contact_id: newcomer.id });
      const next = await api.call('GET', '/v1/conversations', {
        ...as(tenant),
        query: { limit: 4, starting_after: first.body.data.at(-1).id },
      });
      expect(next.body.data.map((c: { id: string }) => c.id)).toEqual(ids.slice(4, 8));
      ids.unshift(created.body.id);
    });

    it.each([
      ['muted', 'true', (c: { is_muted: boolean }) => c.is_muted],
      ['muted', 'false', (c: { is_muted: boolean }) => !c.is_muted],
      ['pinned', '1', (c: { is_pinned: boolean }) => c.is_pinned],
      ['archived', 'true', (c: { archived_at: number | null }) => c.archived_at !== null],
      ['archived', '0', (c: { archived_at: number | null }) => c.archived_at === null],
    ])('filters %s=%s', async (name, value, keep) => {
      const res = await api.call('GET', '/v1/conversations', { ...as(tenant), query: { [name]: value, limit: 100 } });
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeGreaterThan(0);
      expect(res.body.data.every(keep as (c: unknown) => boolean)).toBe(true);
      const all = await api.call('GET', '/v1/conversations', { ...as(tenant), query: { limit: 100 } });
      expect(res.body.data.length).toBe(all.body.data.filter(keep as (c: unknown) => boolean).length);
    });

    it('filters by group_id', async () => {
      const group = await open(tenant, { group_id: tenant.groupId });
      const res = await api.call('GET', '/v1/conversations', { ...as(tenant), query: { group_id: tenant.groupId } });
      expect(res.body.data.map((c: { id: string }) => c.id)).toEqual([group.body.id]);
      ids.unshift(group.body.id);
    });

    it.each([
      [{ limit: 0 }, 'limit'],
      [{ limit: 101 }, 'limit'],
      [{ limit: 'ten' }, 'limit'],
      [{ limit: '2.5' }, 'limit'],
      [{ muted: 'maybe' }, 'muted'],
      [{ sort: 'asc' }, 'sort'],
      [{ starting_after: 'conv_01JD0000000000000000000000' }, 'starting_after'],
      [{ ending_before: 'nope' }, 'ending_before'],
    ])('rejects query %j with 400 naming %s', async (query, param) => {
      const res = await api.call('GET', '/v1/conversations', { ...as(tenant), query });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param });
    });

    it('rejects starting_after and ending_before together', async () => {
      const res = await api.call('GET', '/v1/conversations', {
        ...as(tenant),
        query: { starting_after: ids[1]!, ending_before: ids[3]! },
      });
      expect(res.status).toBe(400);
    });
  });

  describe('delete', () => {
    it('deletes the conversation and every message in it', async () => {
      const tenant = await aTenant();
      const { body: conv } = await open(tenant, { contact_id: tenant.contactIds.bob! });
      const { body: keep } = await open(tenant, { contact_id: tenant.contactIds.carol! });
      const send = (conversation_id: string, message: string) =>
        api.call('POST', '/v1/messages', { ...as(tenant), form: { conversation_id, message } });
      const sent = await Promise.all(Array.from({ length: 12 }, (_, i) => send(conv.id, `m${i}`)));
      const { body: kept } = await send(keep.id, 'stays');

      const res = await api.call('DELETE', `/v1/conversations/${conv.id}`, as(tenant));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ id: conv.id, deleted: true });

      expect((await api.call('GET', `/v1/conversations/${conv.id}`, as(tenant))).status).toBe(404);
      expect((await api.call('GET', `/v1/messages/${sent[0]!.body.id}`, as(tenant))).status).toBe(404);
      const byConversation = await api.call('GET', '/v1/messages', { ...as(tenant), query: { conversation_id: conv.id } });
      expect(byConversation.status).toBe(404);
      const all = await api.call('GET', '/v1/messages', as(tenant));
      expect(all.body.data.map((m: { id: string }) => m.id)).toEqual([kept.id]);
      expect((await api.call('DELETE', `/v1/conversations/${conv.id}`, as(tenant))).status).toBe(404);
      // The contact can be talked to again: a new conversation, not the deleted one.
      const reopened = await open(tenant, { contact_id: tenant.contactIds.bob! });
      expect(reopened.status).toBe(201);
      expect(reopened.body.id).not.toBe(conv.id);
    });
  });
});
