import { execFile } from 'node:child_process';
import http from 'node:http';
import { promisify } from 'node:util';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCredits } from '#shared/data/accounts';
import { db, tableName } from '#shared/db/client';
import { keys } from '#shared/db/keys';
import { createWebhook } from '#shared/webhooks/subscribe';
import { checkWebhookUrl } from '#shared/webhooks/url-guard';
import { invoke } from '../../scripts/local/lambda.ts';
import { startStreams } from '../../scripts/local/runtime.ts';
import { emailEnv, type EmailEnv } from '../steps/email-env.ts';
import { eventually } from '../steps/eventually.ts';
import { aTenant, type Tenant } from '../steps/given.ts';
import { apiClient, type ApiClient } from '../steps/when.ts';

/**
 * Webhooks (docs/webhooks.md): every event type reaches a loopback
 * receiver, signed so that the Standard Webhooks library (not our code)
 * verifies it; retries keep the event's id; one account's endpoint hears
 * nothing of another's; the event id is the change's.
 */
interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  event: { id: string; type: string; created_at: number; user?: string; data: { object: Record<string, unknown> } };
}

const received: Received[] = [];
/** Path → how many more requests it answers 500. */
const failFirst = new Map<string, number>();
let receiver: http.Server;
let base: string;
let env: EmailEnv | undefined;
let streams: { stop: () => Promise<void> };
let messaging: ApiClient;
let email: ApiClient;

beforeAll(async () => {
  process.env.ALLOW_PRIVATE_WEBHOOKS = 'true';
  // The retry schedule shortened: the 2nd and 3rd attempts 1 s and 2 s after the first.
  process.env.WEBHOOK_RETRY_SECONDS = '1,2,3';
  env = await emailEnv();
  streams = startStreams(process.env as Record<string, string>, { from: 'latest' });
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers as Record<string, string>, body, event: JSON.parse(body) });
      const left = failFirst.get(path) ?? 0;
      failFirst.set(path, left - 1);
      res.statusCode = left > 0 ? 500 : 204;
      res.end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
  messaging = await apiClient('messaging', 'http');
  email = await apiClient('email', 'http');
});

afterAll(async () => {
  await streams?.stop();
  await env?.stop();
  await messaging?.close();
  await email?.close();
  await new Promise((r) => receiver?.close(r));
});

const at = (path: string) => received.filter((r) => r.path === path);
const ofType = (path: string, type: string) => at(path).filter((r) => r.event.type === type);
const arrived = (path: string, type: string, count = 1) =>
  eventually(() => ofType(path, type).length >= count && ofType(path, type), { what: `${count} ${type} at ${path}` });

/** An endpoint of the tenant's account at a path of its own on the receiver. */
async function subscribe(t: Tenant, path: string, events?: string) {
  const { execFileAsync } = { execFileAsync: promisify(execFile) };
  // Through the admin command line, as an operator would (--table: this test's table, not a running npm start).
  const { stdout } = await execFileAsync(
    process.execPath,
    [
      '--import',
      'tsx',
      'scripts/admin.ts',
      'webhook',
      'create',
      '--account',
      t.accountId,
      '--url',
      `${base}${path}`,
      '--table',
      tableName(),
      ...(events ? ['--events', events] : []),
    ],
    { env: process.env },
  );
  const created = JSON.parse(stdout) as { webhook_id: string; secret: string };
  expect(created.webhook_id).toMatch(/^whk_/);
  expect(created.secret).toMatch(/^whsec_/);
  return created;
}

const verify = (secret: string, r: Received) => new StandardWebhook(secret).verify(r.body, r.headers);

describe('webhooks', () => {
  it('delivers to an endpoint the app created over HTTP with its secret key, signed with the secret it was given', async () => {
    // Given an endpoint created through the platform endpoint, for one event type
    const t = await aTenant();
    const created = await messaging.call('POST', '/v1/webhook_endpoints', {
      token: t.secretKey,
      json: { url: `${base}/platform`, enabled_events: ['message.created'] },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: expect.stringMatching(/^whk_/),
      enabled_events: ['message.created'],
      secret: expect.stringMatching(/^whsec_/),
    });
    const shown = await messaging.call('GET', `/v1/webhook_endpoints/${created.body.id}`, { token: t.secretKey });
    expect(shown.body.secret).toBeUndefined();
    // When alice sends a message
    const conv = (await messaging.call('POST', '/v1/conversations', { token: t.token, form: { contact_id: t.contactIds.bob! } })).body;
    const sent = (await messaging.call('POST', '/v1/messages', { token: t.token, form: { conversation_id: conv.id, message: 'hook' } }))
      .body;
    // Then the event arrives, verified by the Standard Webhooks library with the secret from the create's answer
    const [delivery] = await arrived('/platform', 'message.created');
    expect(verify(created.body.secret, delivery!)).toMatchObject({ type: 'message.created', data: { object: { id: sent.id } } });
    // And a rotated secret verifies the next one
    const rotated = await messaging.call('POST', `/v1/webhook_endpoints/${created.body.id}/rotate_secret`, { token: t.secretKey });
    expect(rotated.body.secret).not.toBe(created.body.secret);
    await messaging.call('POST', '/v1/messages', { token: t.token, form: { conversation_id: conv.id, message: 'again' } });
    const both = await arrived('/platform', 'message.created', 2);
    expect(verify(rotated.body.secret, both[1]!)).toMatchObject({ type: 'message.created' });
    expect(ofType('/platform', 'conversation.created')).toEqual([]);
  });

  it('sends every messaging event type, signed, with the user whose view it is', async () => {
    // Given alice and bob of one account, and an endpoint subscribed to everything
    const t = await aTenant();
    const { secret } = await subscribe(t, '/messaging');
    // When alice opens a conversation with bob, sends, edits and deletes a message, and updates and deletes her conversation
    const conv = (await messaging.call('POST', '/v1/conversations', { token: t.token, form: { contact_id: t.contactIds.bob! } })).body;
    const sent = (await messaging.call('POST', '/v1/messages', { token: t.token, form: { conversation_id: conv.id, message: 'hi' } })).body;
    await messaging.call('PUT', `/v1/messages/${sent.id}`, { token: t.token, form: { message: 'hi bob' } });
    await messaging.call('DELETE', `/v1/messages/${sent.id}`, { token: t.token });
    await messaging.call('PUT', `/v1/conversations/${conv.id}`, { token: t.token, form: { is_muted: 'true' } });
    await messaging.call('DELETE', `/v1/conversations/${conv.id}`, { token: t.token });
    // Then each event type arrives, and the Standard Webhooks library verifies every one
    const created = await arrived('/messaging', 'message.created');
    expect(created[0]!.event).toMatchObject({
      user: t.contactIds.alice,
      data: { object: { id: sent.id, conversation_id: conv.id, message: 'hi' } },
    });
    const updated = await arrived('/messaging', 'message.updated');
    expect(updated.some((r) => r.event.data.object.message === 'hi bob')).toBe(true);
    expect((await arrived('/messaging', 'message.deleted'))[0]!.event.data.object.id).toBe(sent.id);
    const opened = await arrived('/messaging', 'conversation.created', 2);
    // One per view: alice's own, and bob's opened by the delivery
    expect(new Set(opened.map((r) => r.event.user))).toEqual(new Set([t.contactIds.alice, t.contactIds.bob]));
    expect(opened.find((r) => r.event.user === t.contactIds.alice)!.event.data.object.id).toBe(conv.id);
    const muted = await eventually(() => ofType('/messaging', 'conversation.updated').find((r) => r.event.data.object.is_muted === true), {
      what: 'the muted conversation.updated',
    });
    expect(muted.event.user).toBe(t.contactIds.alice);
    expect((await arrived('/messaging', 'conversation.deleted'))[0]!.event.data.object.id).toBe(conv.id);
    for (const r of at('/messaging')) {
      expect(verify(secret, r)).toEqual(r.event);
      expect(r.headers['webhook-id']).toBe(r.event.id);
      expect(r.event.id).toMatch(/^evt_/);
    }
  }, 60_000);

  it("dates each event by its change, to the second of its object's own time, and orders the ids of one second by commit", async () => {
    // Given an endpoint subscribed to the messaging events
    const t = await aTenant();
    await subscribe(t, '/times', 'conversation.created,conversation.deleted,message.created,message.updated');
    // When alice opens a conversation, sends five messages one after another (most in one second), edits the first, deletes the conversation
    const conv = (await messaging.call('POST', '/v1/conversations', { token: t.token, form: { contact_id: t.contactIds.bob! } })).body;
    const sent: { id: string; created_at: number }[] = [];
    for (let i = 0; i < 5; i++) {
      sent.push(
        (await messaging.call('POST', '/v1/messages', { token: t.token, form: { conversation_id: conv.id, message: `m${i}` } })).body,
      );
    }
    const edited = (await messaging.call('PUT', `/v1/messages/${sent[0]!.id}`, { token: t.token, form: { message: 'm0, edited' } })).body;
    const before = Math.floor(Date.now() / 1000);
    await messaging.call('DELETE', `/v1/conversations/${conv.id}`, { token: t.token });
    const after = Math.floor(Date.now() / 1000);
    // Then each event's created_at is its object's own time, to the second
    const created = await arrived('/times', 'message.created', 5);
    for (const r of created) expect(r.event.created_at).toBe(r.event.data.object.created_at);
    const [update] = await arrived('/times', 'message.updated');
    expect(update!.event.created_at).toBe(edited.updated_at);
    expect(update!.event.data.object.updated_at).toBe(edited.updated_at);
    const opened = (await arrived('/times', 'conversation.created', 2)).find((r) => r.event.data.object.id === conv.id)!;
    expect(opened.event.created_at).toBe(conv.created_at);
    // And a deletion, which leaves no item to carry its time, is dated by the stream within a poll of its commit
    const [deleted] = await arrived('/times', 'conversation.deleted');
    expect(deleted!.event.created_at).toBeGreaterThanOrEqual(before);
    expect(deleted!.event.created_at).toBeLessThanOrEqual(after + 1);
    // And the ids of the message events, sorted, follow the order the messages were committed in
    const byId = [...created].sort((a, b) => (a.event.id < b.event.id ? -1 : 1)).map((r) => r.event.data.object.id);
    expect(byId).toEqual(sent.map((m) => m.id));
    expect(created.map((r) => r.event.created_at).sort((a, b) => a - b)).toEqual(sent.map((m) => m.created_at));
  }, 60_000);

  it('sends the email list events once per transition, and only the subscribed types', async () => {
    // Given an account with credits for 2 emails, subscribed to the list events only
    const t = await aTenant();
    await addCredits(t.accountId, 2);
    const { secret } = await subscribe(t, '/lists', 'email_list.completed,email_list.insufficient_credits,email_list.error');
    // When it creates a list (no event: an empty list is complete from the start) and adds 2 emails, then 3 more
    const list = (await email.call('POST', '/api/v1/emailList', { token: t.token, json: { name: 'l' } })).body;
    await email.call('POST', `/api/v1/emailList/${list.id}/emails`, {
      token: t.token,
      json: { emails: ['a@example.com', 'b@example.com'] },
    });
    // Then it completes once
    const [completed] = await arrived('/lists', 'email_list.completed');
    expect(completed!.event.data.object).toMatchObject({ id: list.id, status: 'completed', email_count: 2 });
    // When 3 more exceed the credits: insufficient_credits
    await email.call('POST', `/api/v1/emailList/${list.id}/emails`, {
      token: t.token,
      json: { emails: ['c@example.com', 'd@example.com', 'e@example.com'] },
    });
    const [held] = await arrived('/lists', 'email_list.insufficient_credits');
    expect(held!.event.data.object).toMatchObject({ id: list.id, status: 'insufficient_credits' });
    // When a batch of its emails fails permanently (as the dead-letter worker records it)
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.list.key({ acct: t.accountId, list: list.id }),
        UpdateExpression: 'SET has_error = :t',
        ExpressionAttributeValues: { ':t': true },
      }),
    );
    const [failed] = await arrived('/lists', 'email_list.error');
    expect(failed!.event.data.object).toMatchObject({ id: list.id, status: 'error' });
    // And nothing but list events arrived, each once, each verified
    expect(
      at('/lists')
        .map((r) => r.event.type)
        .sort(),
    ).toEqual(['email_list.completed', 'email_list.error', 'email_list.insufficient_credits']);
    for (const r of at('/lists')) expect(verify(secret, r)).toEqual(r.event);
  }, 60_000);

  /** Imports `csv` into the list as a client does (create, presigned upload, GET until it ends); answers the import. */
  async function imported(token: string, listId: number, csv: string) {
    const as = { token };
    const imp = (await email.call('POST', `/api/v1/emailList/${listId}/imports`, { ...as, json: {} })).body;
    const put = await fetch(imp.upload.url, { method: imp.upload.method, headers: imp.upload.headers, body: csv });
    expect(put.status).toBe(200);
    return eventually(
      async () => {
        const shown = (await email.call('GET', `/api/v1/emailList/${listId}/imports/${imp.id}`, as)).body;
        return shown.status !== 'awaiting_upload' && shown.status !== 'importing' && shown;
      },
      { what: 'the import ended', timeoutMs: 60_000, intervalMs: 250 },
    );
  }

  /** The email_count of each email_list.completed in the account's feed, which numbers every event before any is delivered. */
  async function completionsInFeed(t: Tenant) {
    const feed = await messaging.call('GET', '/v1/events', { token: t.secretKey });
    return feed.body.data
      .filter((e: { type: string }) => e.type === 'email_list.completed')
      .map((e: { data: { object: { email_count: number } } }) => e.data.object.email_count);
  }

  it('sends no email_list.completed for an import that failed having added nothing; one for an import whose rows were all refused', async () => {
    // Given an endpoint subscribed to email_list.completed, and a list
    const t = await aTenant();
    await subscribe(t, '/imports', 'email_list.completed');
    const list = (await email.call('POST', '/api/v1/emailList', { token: t.token, json: { name: 'imported' } })).body;
    // When an import of a file with a header and no rows ends in error, having added nothing
    expect((await imported(t.token, list.id, 'email\n')).status).toBe('error');
    // And then an email is added to the list, whose round completes (the sentinel)
    await email.call('POST', `/api/v1/emailList/${list.id}/emails`, { token: t.token, json: { emails: ['a@example.com'] } });
    await arrived('/imports', 'email_list.completed');
    // Then that round's is the one completion
    expect(await completionsInFeed(t)).toEqual([1]);
    // When an import completes having refused its every row, it completes the list it held: a second completion
    expect(await imported(t.token, list.id, 'email\nnot-an-address\n')).toMatchObject({ status: 'completed', rejected_count: 1 });
    await arrived('/imports', 'email_list.completed', 2);
    expect(await completionsInFeed(t)).toEqual([1, 1]);
  }, 60_000);

  it('ends the round a delete emptied, so that a failed import after it completes nothing', async () => {
    // Given a metered account with no credits, subscribed to email_list.completed, and an email of a list held for credits
    const t = await aTenant();
    await addCredits(t.accountId, 0);
    await subscribe(t, '/emptied', 'email_list.completed');
    const list = (await email.call('POST', '/api/v1/emailList', { token: t.token, json: { name: 'emptied' } })).body;
    const added = await email.call('POST', `/api/v1/emailList/${list.id}/emails`, {
      token: t.token,
      json: { emails: ['held@example.com'] },
    });
    const [held] = added.body.emails;
    // When it is deleted: the list completes, as the round of its one email ends
    expect((await email.call('DELETE', `/api/v1/email/${held.id}`, { token: t.token })).status).toBe(200);
    await arrived('/emptied', 'email_list.completed');
    // And an import then fails having added nothing
    expect((await imported(t.token, list.id, 'email\n')).status).toBe('error');
    // And credits come, and an email is added whose round completes (the sentinel)
    await addCredits(t.accountId, 1);
    await email.call('POST', `/api/v1/emailList/${list.id}/emails`, { token: t.token, json: { emails: ['paid@example.com'] } });
    await arrived('/emptied', 'email_list.completed', 2);
    // Then the completions are the delete's and the sentinel's: none for the failed import
    expect(await completionsInFeed(t)).toEqual([0, 1]);
  }, 60_000);

  it('retries a failing receiver with the same webhook-id: the third attempt succeeds', async () => {
    // Given a receiver that answers 500 twice
    const t = await aTenant();
    failFirst.set('/flaky', 2);
    const { secret, webhook_id } = await subscribe(t, '/flaky', 'conversation.created');
    // When alice opens a conversation
    await messaging.call('POST', '/v1/conversations', { token: t.token, form: { group_id: t.groupId } });
    // Then it arrives three times with one id, and the third answer was a success
    const attempts = await arrived('/flaky', 'conversation.created', 3);
    expect(new Set(attempts.map((r) => r.headers['webhook-id'])).size).toBe(1);
    for (const r of attempts) expect(verify(secret, r)).toEqual(r.event);
    // And the deliveries command shows two failures and the success
    const shown = await eventually(
      async () => {
        const { webhookDeliveries } = await import('#shared/webhooks/manage');
        const d = (await webhookDeliveries(webhook_id))!;
        return d.deliveries.length >= 3 && d;
      },
      { what: 'three deliveries recorded' },
    );
    expect(shown.deliveries.map((d) => d.outcome)).toEqual(['succeeded', 'retrying', 'retrying']);
    expect(shown.deliveries.map((d) => d.status_code)).toEqual([204, 500, 500]);
  }, 60_000);

  it("sends another account's endpoint nothing", async () => {
    // Given two accounts, each with an endpoint
    const [one, other] = await Promise.all([aTenant(), aTenant()]);
    await subscribe(one, '/one', 'conversation.created');
    await subscribe(other, '/other', 'conversation.created');
    // When only the first account opens a conversation
    await messaging.call('POST', '/v1/conversations', { token: one.token, form: { contact_id: one.contactIds.carol! } });
    await arrived('/one', 'conversation.created');
    // Then the other account's endpoint receives nothing (its own later event arrives, so the pipeline was running)
    await messaging.call('POST', '/v1/conversations', { token: other.token, form: { contact_id: other.contactIds.carol! } });
    const theirs = await arrived('/other', 'conversation.created');
    expect(theirs.map((r) => r.event.user)).toEqual([other.contactIds.alice]);
  }, 60_000);

  it("appends a change's events once, and sends them with the same id, when a stream batch is delivered again", async () => {
    // Given a change the stream delivered (a conversation created), and the batches its consumers were handed
    const t = await aTenant();
    const { secret } = await subscribe(t, '/again', 'conversation.created');
    const captured: { handler: string; event: unknown }[] = [];
    const capture = startStreams(process.env as Record<string, string>, {
      from: 'trim_horizon',
      run: async (fn, event) => {
        captured.push({ handler: fn.handler, event });
        return { batchItemFailures: [] };
      },
    });
    await messaging.call('POST', '/v1/conversations', { token: t.token, form: { contact_id: t.contactIds.carol! } });
    const [first] = await arrived('/again', 'conversation.created');
    // (the capturing reader starts at the oldest record of the shared table's stream: it may take a while to reach ours)
    const ours = (prefix: string) => (batch: { event: unknown }) =>
      (batch.event as { Records: { dynamodb: { Keys: { pk: { S: string } } } }[] }).Records.some((r) =>
        r.dynamodb.Keys.pk.S.startsWith(`ACC#${t.accountId}#${prefix}`),
      );
    const feedBatches = () => captured.filter((b) => b.handler === 'workers/event-feed').filter(ours('USER#'));
    const webhookBatches = () => captured.filter((b) => b.handler === 'workers/webhook-events').filter(ours('EVENTS'));
    await eventually(() => feedBatches().length > 0 && webhookBatches().length > 0, {
      what: 'the batches holding our change and its appended event captured',
      // The whole run's changes come first (bulk seeds of other files included): read fast, but many.
      timeoutMs: 150_000,
    });
    await capture.stop();
    // When the feed writer is handed its batch again (as Lambda does after a failure)
    for (const { event } of feedBatches()) await invoke('workers/event-feed', event);
    // Then the account's feed holds the conversation's event once
    const feed = await messaging.call('GET', '/v1/events', { token: t.secretKey });
    const opened = feed.body.data.filter((e: { type: string }) => e.type === 'conversation.created');
    expect(opened).toHaveLength(1);
    expect(opened[0].id).toBe(first!.event.id);
    // When the webhook consumer is handed its batch again
    for (const { event } of webhookBatches()) await invoke('workers/webhook-events', event);
    // Then the receiver gets the event again with the same id: the feed's
    const all = await arrived('/again', 'conversation.created', 2);
    expect(new Set(all.map((r) => r.event.id))).toEqual(new Set([first!.event.id]));
    for (const r of all) expect(verify(secret, r)).toEqual(r.event);
  }, 180_000);

  it('gives an event the same webhook-id when its queue message is delivered again', async () => {
    // Given a delivery job for an endpoint
    const t = await aTenant();
    const { secret, webhook_id } = await subscribe(t, '/queue-again', 'conversation.created');
    const job = {
      webhook_id,
      account_id: t.accountId,
      attempt: 1,
      event: {
        id: 'evt_01JD00000000000000000000AB',
        type: 'conversation.created',
        created_at: 1,
        user: 'ct_x',
        data: { object: { id: 'conv_x' } },
      },
    };
    const record = (messageId: string) => ({ messageId, body: JSON.stringify(job), attributes: { ApproximateReceiveCount: '1' } });
    // When the queue hands the same message to the worker twice (a redelivery after a lost delete)
    await invoke('workers/deliver-webhooks', { Records: [record('m1')] });
    await invoke('workers/deliver-webhooks', { Records: [record('m1')] });
    // Then both calls carry the one event id, each verified
    const calls = await arrived('/queue-again', 'conversation.created', 2);
    expect(calls.map((r) => r.headers['webhook-id'])).toEqual([job.event.id, job.event.id]);
    for (const r of calls) expect(verify(secret, r)).toEqual(r.event);
  });
});

describe('the SSRF guard of endpoint URLs', () => {
  it.each([
    ['http://127.0.0.1:8080/hook', 'loopback'],
    ['https://10.0.0.5/hook', 'private'],
    ['https://169.254.169.254/latest/meta-data', 'metadata'],
    ['https://[::1]/hook', 'IPv6 loopback'],
    ['http://93.184.215.14/hook', 'plain http'],
    ['ftp://93.184.215.14/hook', 'another scheme'],
    ['https://user:pw@93.184.215.14/hook', 'credentials'],
  ])('refuses %s outside local runs (%s)', async (url) => {
    // Given a deployed configuration (no ALLOW_PRIVATE_WEBHOOKS), when the URL is checked, then it is refused
    expect((await checkWebhookUrl(url, false)).ok).toBe(false);
  });

  it('accepts a public https address, and loopback http only when private targets are allowed', async () => {
    expect((await checkWebhookUrl('https://93.184.215.14/hook', false)).ok).toBe(true);
    expect((await checkWebhookUrl('http://127.0.0.1:8080/hook', true)).ok).toBe(true);
    // Never the metadata endpoint, not even locally
    expect((await checkWebhookUrl('http://169.254.169.254/', true)).ok).toBe(false);
  });

  it('is what webhook create applies', async () => {
    const t = await aTenant();
    process.env.ALLOW_PRIVATE_WEBHOOKS = 'false';
    try {
      await expect(createWebhook(t.accountId, `${base}/never`, null)).rejects.toThrow(/refused/);
    } finally {
      process.env.ALLOW_PRIVATE_WEBHOOKS = 'true';
    }
  });
});
