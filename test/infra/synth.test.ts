import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { feedPartition } from '#shared/data/events';
import { db, tableName } from '#shared/db/client';
import { query } from '#shared/db/items';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queues, deadLetterUrlEnv, queueUrlEnv, type QueueDefinition } from '#shared/queues';
import { routes, type QueueName } from '#shared/routes';
import { DEPLOY_NODE_MAJOR } from '../../infra/runtime.ts';
import { bundleInvoker, CloudAssembly, type AssemblyFunction } from '../../scripts/local/cloud-assembly.ts';
import type { Invoker } from '../../scripts/local/lambda.ts';
import { startRealtimeServer, type RunningRealtime } from '../../scripts/local/realtime-server.ts';
import { startWorkers } from '../../scripts/local/runtime.ts';
import WebSocket from 'ws';
import { aTenant } from '../steps/given.ts';
import { emailEnv, type EmailEnv } from '../steps/email-env.ts';
import { eventually } from '../steps/eventually.ts';
import { queuesSettled } from '../steps/queues.ts';
import { apiClient, type ApiClient } from '../steps/when.ts';

const run = promisify(execFile);

/**
 * The real `cdk synth`, bundling every function with esbuild, with no AWS
 * credentials at all; then the bundles it wrote serve both APIs and the
 * workers, wired from the synthesized template as Lambda would run them.
 */
describe('cdk synth', () => {
  const out = mkdtempSync(join(tmpdir(), 'cdk-out-'));
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  beforeAll(async () => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_')));
    // A validator setting marks the functions that validate, so the test can point just those at its DNS server.
    await run('npx', ['cdk', 'synth', '--quiet', '--output', out, '-c', 'DNS_SERVERS=127.0.0.1'], {
      env: { ...env, CDK_DISABLE_VERSION_CHECK: '1', AWS_EC2_METADATA_DISABLED: 'true' },
      timeout: 240_000,
    });
  }, 300_000);

  it('synthesizes and bundles every handler as an ESM bundle for the Node major of .nvmrc, without credentials', () => {
    const template = JSON.parse(readFileSync(join(out, 'MessagingAndEmailValidationStack.template.json'), 'utf8'));
    type Resource = { Type: string; Properties: { Runtime?: string } };
    const functions = Object.values(template.Resources as Record<string, Resource>).filter((r) => r.Type === 'AWS::Lambda::Function');
    expect(functions.length).toBeGreaterThanOrEqual(routes.length);
    expect(new Set(functions.map((f) => f.Properties.Runtime))).toEqual(new Set([`nodejs${DEPLOY_NODE_MAJOR}.x`]));
    const bundles = readdirSync(out).filter((d) => d.startsWith('asset.'));
    expect(bundles.length).toBeGreaterThanOrEqual(routes.length);
    for (const dir of bundles) {
      const files = readdirSync(join(out, dir));
      const entry = files.find((f) => f === 'index.mjs' || f === 'index.js');
      if (!entry) continue;
      const code = readFileSync(join(out, dir, entry), 'utf8');
      expect(code).toMatch(/export\s*\{/); // ESM: Lambda imports `handler` from the bundle
    }
  });

  describe('the deployed bundles, served from cdk.out', () => {
    let assembly: CloudAssembly;
    let env: EmailEnv | undefined;
    let invoke: Invoker;
    let messaging: ApiClient;
    let email: ApiClient;
    let workers: { stop: () => Promise<void> };
    let realtimeServer: RunningRealtime;
    const invoked = new Set<string>();
    const sqs = new SQSClient({});
    // Read once: while a function runs, this process's environment is that function's.
    const urls = { purge: '', deadLetters: '', delivery: '', webhooks: '' };

    beforeAll(async () => {
      assembly = CloudAssembly.read(out);
      env = await emailEnv(undefined, { workers: false });
      urls.purge = process.env.PURGE_QUEUE_URL!;
      urls.delivery = process.env.DELIVERY_QUEUE_URL!;
      urls.webhooks = process.env.WEBHOOKS_QUEUE_URL!;
      urls.deadLetters = process.env.VALIDATION_DLQ_URL!;
      const queueUrls: Record<string, string> = {};
      for (const [key, def] of Object.entries(queues) as [QueueName, QueueDefinition][]) {
        queueUrls[`${assembly.stackName}-${def.name}`] = process.env[queueUrlEnv(key)]!;
        queueUrls[`${assembly.stackName}-${def.name}-dlq`] = process.env[deadLetterUrlEnv(key)]!;
      }
      // The WebSocket API's routes and authorizer run from their bundles too.
      realtimeServer = await startRealtimeServer(0, undefined, (fn, event, timeout) => invoke(fn, event, timeout));
      // What Lambda provides around a function's own variables: region, credentials, endpoints (here the local ones).
      const platform = {
        ...(Object.fromEntries(
          Object.entries(process.env).filter(([k]) =>
            /^(AWS_(REGION|ACCESS_KEY_ID|SECRET_ACCESS_KEY|ENDPOINT_URL_\w+|SDK_JS_\w+)|LOG_LEVEL|PATH|HOME)$/.test(k),
          ),
        ) as Record<string, string>),
        // A route's own @connections endpoint: on AWS the https URL of the event's domain and stage, here the local server's (as npm start sets it).
        REALTIME_ENDPOINT: realtimeServer.callbackUrl,
        // Loopback webhook receivers, and secrets sealed with a local key where KMS seals them on AWS, as under npm start.
        ALLOW_PRIVATE_WEBHOOKS: 'true',
        WEBHOOK_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
      };
      const localValidator = { DNS_SERVERS: env!.dns.address, ALLOW_PRIVATE_MX: 'true', DNS_TIMEOUT_MS: '400', DNS_TRIES: '2' };
      invoke = bundleInvoker(
        assembly,
        {
          tableName: process.env.TABLE_NAME!,
          queueUrls,
          realtimeEndpoint: realtimeServer.callbackUrl,
          filesBucket: process.env.FILES_BUCKET!,
        },
        (_fn: AssemblyFunction, own) => ({ ...platform, ...own, ...(own.DNS_SERVERS ? localValidator : {}) }),
        (fn) => invoked.add(fn.logicalId),
      );
      [messaging, email] = await Promise.all([
        apiClient('messaging', 'http', { run: invoke }),
        apiClient('email', 'http', { run: invoke }),
      ]);
      workers = startWorkers(process.env as Record<string, string>, { waitSeconds: 1, run: invoke });
    }, 60_000);

    afterAll(async () => {
      await workers?.stop();
      await realtimeServer?.close();
      await Promise.all([messaging?.close(), email?.close()]);
      await env?.stop();
      sqs.destroy();
    });

    it('answer every route of the messaging API', async () => {
      const t = await aTenant();
      const as = { token: t.token };
      expect((await messaging.call('GET', '/v1/conversations', {})).status).toBe(401);
      const conversation = await messaging.call('POST', '/v1/conversations', { ...as, form: { contact_id: t.contactIds.bob! } });
      expect(conversation.status).toBe(201);
      const id = conversation.body.id;
      expect((await messaging.call('GET', '/v1/conversations', as)).body.data).toHaveLength(1);
      expect((await messaging.call('GET', `/v1/conversations/${id}`, as)).status).toBe(200);
      expect((await messaging.call('PUT', `/v1/conversations/${id}`, { ...as, form: { is_pinned: 'true' } })).body.is_pinned).toBe(true);
      const message = await messaging.call('POST', '/v1/messages', { ...as, form: { conversation_id: id, message: 'from the bundle' } });
      expect(message.status).toBe(201);
      expect((await messaging.call('GET', '/v1/messages', { ...as, query: { conversation_id: id } })).body.data).toHaveLength(1);
      expect((await messaging.call('GET', `/v1/messages/${message.body.id}`, as)).body.message).toBe('from the bundle');
      expect((await messaging.call('PUT', `/v1/messages/${message.body.id}`, { ...as, form: { message: 'edited' } })).body.message).toBe(
        'edited',
      );
      expect((await messaging.call('DELETE', `/v1/messages/${message.body.id}`, as)).status).toBe(200);
      // A file: presigned upload, found uploaded, attached, downloaded, let go with its message.
      const file = await messaging.call('POST', '/v1/files', { ...as, form: { name: 'b.txt', content_type: 'text/plain', size: 6 } });
      expect(file.status).toBe(201);
      expect((await fetch(file.body.upload.url, { method: 'PUT', headers: file.body.upload.headers, body: 'bundle' })).status).toBe(200);
      expect((await messaging.call('GET', `/v1/files/${file.body.id}`, as)).body.status).toBe('uploaded');
      const withFile = await messaging.call('POST', '/v1/messages', {
        ...as,
        form: { conversation_id: id, message: 'file', 'attachments[0][file_id]': file.body.id },
      });
      expect(await (await fetch(withFile.body.attachments[0].url)).text()).toBe('bundle');
      expect((await messaging.call('DELETE', `/v1/messages/${withFile.body.id}`, as)).status).toBe(200);
      expect((await messaging.call('GET', `/v1/files/${file.body.id}`, as)).status).toBe(404);
      expect((await messaging.call('DELETE', `/v1/conversations/${id}`, as)).status).toBe(200);
      expect((await messaging.call('GET', '/v1/nowhere', as)).status).toBe(404);
      expect((await messaging.call('PATCH', '/v1/messages', as)).status).toBe(405);

      // The purge worker takes a job of a deleted conversation from its queue (here finished: its record is gone or let go).
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: urls.purge,
          MessageBody: JSON.stringify({ kind: 'purge-conversation', accountId: t.accountId, subject: `CONV#${id}`, chain: 'synth' }),
        }),
      );
      await queuesSettled([urls.purge], 'the purge job handled');

      // A group message reaches bob in his own conversation; the delivery worker takes a (here finished) job from its queue.
      const group = await messaging.call('POST', '/v1/conversations', { ...as, form: { group_id: t.groupId } });
      const toGroup = await messaging.call('POST', '/v1/messages', { ...as, form: { conversation_id: group.body.id, message: 'team' } });
      expect(toGroup.status).toBe(201);
      expect((await messaging.call('GET', '/v1/conversations', { token: t.token2 })).body.data).toContainEqual(
        expect.objectContaining({ group_id: t.groupId, unread_count: 1 }),
      );
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: urls.delivery,
          MessageBody: JSON.stringify({
            kind: 'fanout',
            accountId: t.accountId,
            subject: `MSG#${toGroup.body.id}`,
            chain: 'synth',
          }),
        }),
      );
      await queuesSettled([urls.delivery], 'the fan-out job handled');
    });

    it('answer every platform route with the secret key', async () => {
      const t = await aTenant();
      const as = { token: t.secretKey };
      const ok = async (method: string, path: string, form?: Record<string, string>, json?: unknown) => {
        const res = await messaging.call(method, path, { ...as, ...(form ? { form } : {}), ...(json ? { json } : {}) });
        expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300);
        return res.body;
      };
      const contact = await ok('POST', '/v1/contacts', { username: 'bundle' });
      await ok('GET', '/v1/contacts');
      await ok('GET', `/v1/contacts/${contact.id}`);
      await ok('PUT', `/v1/contacts/${contact.id}`, { phone_number: '+15550100077' });
      const token = await ok('POST', `/v1/contacts/${contact.id}/tokens`, {});
      // An idempotent create with a credential: its sealing is a chunk of the bundle, loaded by the first such answer
      const keyed = { ...as, form: {}, headers: { 'Idempotency-Key': 'synth-token' } };
      const first = await messaging.call('POST', `/v1/contacts/${contact.id}/tokens`, keyed);
      const replay = await messaging.call('POST', `/v1/contacts/${contact.id}/tokens`, keyed);
      expect([first.status, replay.status, replay.headers['idempotent-replayed']]).toEqual([201, 201, 'true']);
      expect(replay.body.token).toBe(first.body.token);
      await ok('GET', `/v1/contacts/${contact.id}/tokens`);
      await ok('DELETE', `/v1/contacts/${contact.id}/tokens/${token.id}`);
      const group = await ok('POST', '/v1/groups', undefined, { name: 'bundle', members: [contact.id] });
      await ok('GET', '/v1/groups');
      await ok('GET', `/v1/groups/${group.id}`);
      await ok('PUT', `/v1/groups/${group.id}`, { name: 'renamed' });
      await ok('POST', `/v1/groups/${group.id}/members`, { contact_id: t.userContactId });
      await ok('GET', `/v1/groups/${group.id}/members`);
      await ok('DELETE', `/v1/groups/${group.id}/members/${t.userContactId}`);
      await ok('DELETE', `/v1/groups/${group.id}`);
      await ok('DELETE', `/v1/contacts/${contact.id}`);
      const hook = await ok('POST', '/v1/webhook_endpoints', { url: 'http://127.0.0.1:9/bundle' });
      await ok('GET', '/v1/webhook_endpoints');
      await ok('GET', `/v1/webhook_endpoints/${hook.id}`);
      await ok('PUT', `/v1/webhook_endpoints/${hook.id}`, { url: 'http://127.0.0.1:9/other' });
      await ok('POST', `/v1/webhook_endpoints/${hook.id}/rotate_secret`, {});
      await ok('DELETE', `/v1/webhook_endpoints/${hook.id}`);
      expect((await ok('GET', '/v1/account')).id).toBe(t.accountId);
      expect(await ok('GET', '/v1/events')).toMatchObject({ has_more: false });
      expect((await email.call('GET', '/api/v1/account', as)).body.id).toBe(t.accountId);
      // A user token is refused by the bundle of a platform route
      expect((await messaging.call('GET', '/v1/contacts', { token: t.token })).status).toBe(403);
    });

    it('answer every route of the email API, with the worker validating from its queue', async () => {
      const t = await aTenant();
      const as = { token: t.token };
      expect((await email.call('GET', '/api/v1/emails', {})).status).toBe(401);
      const created = await email.call('POST', '/api/v1/emails', { ...as, json: { emails: ['info@example.com', 'x@nowhere.test'] } });
      expect(created.status).toBe(201);
      expect(created.body.emails.map((e: { is_valid: boolean }) => e.is_valid)).toEqual([true, false]);
      const [valid, invalid] = created.body.emails.map((e: { id: number }) => e.id);
      expect((await email.call('GET', '/api/v1/emails', as)).body.emails).toHaveLength(2);
      expect((await email.call('GET', `/api/v1/email/${valid}`, as)).body.status).toBe('completed');
      expect((await email.call('DELETE', `/api/v1/email/${invalid}`, as)).status).toBe(200);

      const list = await email.call('POST', '/api/v1/emailList', { ...as, json: { name: 'from cdk.out' } });
      expect(list.status).toBe(201);
      const listId = list.body.id;
      expect((await email.call('GET', '/api/v1/emailLists', as)).body.emailLists).toHaveLength(1);
      const added = await email.call('POST', `/api/v1/emailList/${listId}/emails`, {
        ...as,
        json: { emails: ['a@example.com', 'b@gmail.com', 'bad'] },
      });
      expect(added.status).toBe(201);
      const done = await eventually(
        async () => {
          const res = await email.call('GET', `/api/v1/emailList/${listId}`, as);
          return res.body.status === 'completed' && res.body;
        },
        { what: `list ${listId} completed` },
      );
      expect(done).toMatchObject({ email_count: 2, rejected_count: 1 });
      expect((await email.call('GET', `/api/v1/emailList/${listId}/emails`, as)).body.emails).toHaveLength(2);
      // A CSV import (its job on the purge queue's worker) and an export, through the bundles.
      const imported = await email.call('POST', `/api/v1/emailList/${listId}/imports`, { ...as, json: {} });
      expect(imported.status).toBe(201);
      const upload = imported.body.upload;
      expect((await fetch(upload.url, { method: 'PUT', headers: upload.headers, body: 'email\nc@example.com\n' })).status).toBe(200);
      await eventually(
        async () => (await email.call('GET', `/api/v1/emailList/${listId}/imports/${imported.body.id}`, as)).body.status === 'completed',
        { what: 'the import completed', timeoutMs: 60_000 },
      );
      const exported = await email.call('POST', `/api/v1/emailList/${listId}/exports`, { ...as, json: {} });
      expect(exported.status).toBe(201);
      const shown = await eventually(
        async () => {
          const res = await email.call('GET', `/api/v1/emailList/${listId}/exports/${exported.body.id}`, as);
          return res.body.status === 'completed' && res.body;
        },
        { what: 'the export completed' },
      );
      expect((await (await fetch(shown.download_url)).text()).split('\r\n')[0]).toMatch(/^email,status,is_valid,deliverability,score,/);
      expect((await email.call('DELETE', `/api/v1/emailList/${listId}`, as)).status).toBe(200);
      expect((await email.call('GET', '/api/v1/nowhere', as)).status).toBe(404);

      // The dead-letter worker, and the sweeper on its schedule.
      await sqs.send(
        new SendMessageCommand({ QueueUrl: urls.deadLetters, MessageBody: JSON.stringify({ accountId: t.accountId, emailIds: [valid] }) }),
      );
      await queuesSettled([urls.deadLetters], 'the dead-lettered batch handled');
      expect([...invoked].some((id) => id.startsWith('ValidationDeadLettersWorkerFn'))).toBe(true);
      await expect(invoke({ handler: 'workers/sweeper' }, {}, 60)).resolves.toMatchObject({ resent: expect.any(Number) });
    });

    /** The stream record of an item's insert, as the event source mapping hands it to a consumer. */
    const insertRecord = async (key: { pk: string; sk: string }, sequenceNumber: string) => {
      const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: key }));
      return {
        eventID: `e${sequenceNumber}`,
        eventName: 'INSERT',
        eventSource: 'aws:dynamodb',
        dynamodb: {
          ApproximateCreationDateTime: Date.now() / 1000,
          SequenceNumber: sequenceNumber,
          Keys: marshall(key),
          NewImage: marshall(Item!),
        },
      };
    };

    /** The stream record of the newest event of a feed (a user's, or the account's), as its consumer is handed it. */
    const lastEventRecord = async (feed: { accountId: string; contactId?: string }, sequenceNumber: string) => {
      const [item] = await query(
        { partition: feedPartition(feed), sort: ['begins_with', feed.contactId ? 'EVT#' : 'AEVT#'], forward: false },
        1,
      );
      return insertRecord({ pk: String(item!.pk), sk: String(item!.sk) }, sequenceNumber);
    };

    it('run the change-stream consumers (the events feeds, webhooks) and the webhook worker', async () => {
      // A committed change of an event item (a new conversation), as the stream hands it to the feed writer
      const t = await aTenant();
      const conversation = await messaging.call('POST', '/v1/conversations', { token: t.token, form: { contact_id: t.contactIds.bob! } });
      const record = await insertRecord(
        { pk: `ACC#${t.accountId}#USER#${t.contactIds.alice}#CONV#${conversation.body.id}`, sk: 'CONV' },
        '1',
      );
      await expect(invoke({ handler: 'workers/event-feed' }, { Records: [record] }, 60)).resolves.toEqual({ batchItemFailures: [] });
      // Its event appended to the account's feed, as the stream hands it to the webhook consumer
      const appended = await lastEventRecord({ accountId: t.accountId }, '2');
      expect(JSON.parse(String(appended.dynamodb.NewImage.body?.S))).toMatchObject({ type: 'conversation.created' });
      // The account has no endpoint: consumed, nothing to send
      await expect(invoke({ handler: 'workers/webhook-events' }, { Records: [appended] }, 60)).resolves.toEqual({ batchItemFailures: [] });
      // A job for an endpoint that no longer exists is dropped by the worker
      const job = {
        webhook_id: 'whk_01JD0000000000000000000000',
        account_id: t.accountId,
        attempt: 1,
        event: { id: 'evt_x', type: 'conversation.created', created_at: 1, data: { object: {} } },
      };
      await sqs.send(new SendMessageCommand({ QueueUrl: urls.webhooks, MessageBody: JSON.stringify(job) }));
      await queuesSettled([urls.webhooks], 'the webhook job handled');
      expect([...invoked].some((id) => id.startsWith('DeliverWebhooksWorkerFn'))).toBe(true);
    });

    it('run the WebSocket routes, their authorizer and the realtime fan-out', async () => {
      // Given bob connected (the authorizer and $connect), and a message alice sent him
      const t = await aTenant();
      const socket = new WebSocket(realtimeServer.url, ['bearer', t.token2]);
      const frames: { type: string; data: { object: { id?: string } } }[] = [];
      socket.on('message', (data) => frames.push(JSON.parse(data.toString())));
      await new Promise((resolve, reject) => (socket.once('open', resolve), socket.once('error', reject)));
      socket.send(JSON.stringify({ action: 'ping' }));
      await eventually(() => frames.some((f) => f.type === 'pong'), { what: 'the pong' });
      const conversation = await messaging.call('POST', '/v1/conversations', { token: t.token, form: { contact_id: t.contactIds.bob! } });
      const sent = await messaging.call('POST', '/v1/messages', {
        token: t.token,
        form: { conversation_id: conversation.body.id, message: 'hi' },
      });
      // When the stream hands the feed writer bob's entry of it, and the realtime consumer the event appended to bob's feed
      const bobConversation = (await messaging.call('GET', '/v1/conversations', { token: t.token2 })).body.data[0].id;
      const record = await insertRecord(
        { pk: `ACC#${t.accountId}#USER#${t.contactIds.bob}#CONV#${bobConversation}`, sk: `#MSG#${sent.body.id}` },
        '3',
      );
      await expect(invoke({ handler: 'workers/event-feed' }, { Records: [record] }, 60)).resolves.toEqual({ batchItemFailures: [] });
      const appended = await lastEventRecord({ accountId: t.accountId, contactId: t.contactIds.bob! }, '4');
      await expect(invoke({ handler: 'workers/realtime-events' }, { Records: [appended] }, 60)).resolves.toEqual({ batchItemFailures: [] });
      // Then bob's socket gets the frame, and his closing it runs $disconnect
      await eventually(() => frames.some((f) => f.type === 'message.created' && f.data.object.id === sent.body.id), {
        what: "bob's frame of the message",
      });
      socket.close();
      await eventually(() => [...invoked].some((id) => id.startsWith('RealtimeDisconnectFn')), { what: 'the $disconnect route run' });
    });

    it('ran every function of the template, each from its own bundle', () => {
      expect([...invoked].sort()).toEqual(
        assembly
          .functions()
          .map((f) => f.logicalId)
          .sort(),
      );
    });
  });
});

describe('cdk synth with a setting that cannot work', () => {
  it('fails with one line naming the setting and its allowed values', { timeout: 120_000 }, async () => {
    const out = mkdtempSync(join(tmpdir(), 'cdk-out-'));
    try {
      const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_')));
      const failed = await run('npx', ['cdk', 'synth', '--quiet', '--output', out, '-c', 'SMTP_PROBE=bogus'], {
        env: { ...env, CDK_DISABLE_VERSION_CHECK: '1', AWS_EC2_METADATA_DISABLED: 'true' },
        timeout: 100_000,
      }).then(
        () => undefined,
        (error: { code: number; stderr: string }) => error,
      );
      expect(failed?.code).toBe(1);
      const lines = failed!.stderr.split('\n').filter((line) => line.startsWith('cdk synth:') || /Error|at /.test(line));
      expect(lines).toEqual(["cdk synth: SMTP_PROBE must be one of 'off', 'tcp', 'rcpt', got 'bogus'"]);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});

describe('the stack name', () => {
  it('comes from -c stackName, else STACK_NAME, else serverless-messaging', { timeout: 120_000 }, async () => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_') && k !== 'STACK_NAME'));
    const list = async (args: string[], extra: Record<string, string> = {}) =>
      (
        await run('npx', ['cdk', 'ls', ...args], {
          env: { ...env, ...extra, CDK_DISABLE_VERSION_CHECK: '1', AWS_EC2_METADATA_DISABLED: 'true' },
          timeout: 100_000,
        })
      ).stdout.trim();
    // Given no setting, then the default; given the context value, then it, over the environment's
    expect(await list([])).toBe('MessagingAndEmailValidationStack (serverless-messaging)');
    expect(await list(['-c', 'stackName=from-context'], { STACK_NAME: 'from-env' })).toBe(
      'MessagingAndEmailValidationStack (from-context)',
    );
    expect(await list([], { STACK_NAME: 'from-env' })).toBe('MessagingAndEmailValidationStack (from-env)');
  });
});
