import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { feedPosition } from '#shared/data/event-ids';
import { feedPartition } from '#shared/data/events';
import { db, tableName } from '#shared/db/client';
import { getItem } from '#shared/db/items';
import { keys } from '#shared/db/keys';
import { objectKey } from '#shared/files/files';
import { resetStorage } from '#shared/files/storage';
import { handler as purgeWorker } from '../../functions/workers/purge.ts';
import { handler as sweeper } from '../../functions/workers/sweeper.ts';
import { eventually } from '../steps/eventually.ts';
import { anotherUserOf, aTenant, type Tenant } from '../steps/given.ts';
import { jobEvent, jobOf, timePasses } from '../steps/jobs.ts';
import { realtimeStack } from '../steps/sockets.ts';
import { apiClient, transports, type ApiClient } from '../steps/when.ts';

/**
 * Files (POST /v1/files, attachments by `file_id`): uploaded straight to
 * storage with a presigned PUT that storage refuses for another size or
 * content type, attached by their uploader, downloaded by the thread's
 * participants through URLs made for each reader, deleted when the last
 * message attaching them goes (through a durable job, so a crash between
 * the commit and the deletion loses nothing) or 24 h after an upload never
 * attached. Storage is the local S3-compatible server, which checks
 * signatures as S3 does.
 */
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

interface Upload {
  url: string;
  method: string;
  headers: Record<string, string>;
  expires_at: number;
}

/** Sends bytes to a presigned upload as a browser or curl would: the upload's headers, the body's own length. */
const put = (upload: Upload, body: Uint8Array, headers: Record<string, string> = {}) =>
  fetch(upload.url, { method: upload.method, headers: { ...upload.headers, ...headers }, body });

const download = async (url: string) => {
  const response = await fetch(url);
  return { status: response.status, bytes: new Uint8Array(await response.arrayBuffer()), type: response.headers.get('content-type') };
};

/** Storage's answer to a GET of the object with a URL made now (what a reader would get). */
async function objectThere(accountId: string, fileId: string): Promise<boolean> {
  const { downloadUrl } = await import('#shared/files/storage');
  return (await fetch(await downloadUrl(objectKey(accountId, fileId), 'x', 60))).status === 200;
}

describe.each(transports())('files over %s', (transport) => {
  let api: ApiClient;
  let t: Tenant;
  let conversationId: string;

  beforeAll(async () => {
    api = await apiClient('messaging', transport);
    t = await aTenant();
    conversationId = (await api.call('POST', '/v1/conversations', { token: t.token, form: { contact_id: t.contactIds.bob! } })).body.id;
  });
  afterAll(() => api.close());

  const createFile = (token: string, form: Record<string, string | number>) => api.call('POST', '/v1/files', { token, form });

  /** A file of `bytes` uploaded by the token's user. */
  async function uploaded(token: string, bytes: Uint8Array, contentType = 'image/png', name = 'photo.png') {
    const created = await createFile(token, { name, content_type: contentType, size: bytes.length });
    expect(created.status).toBe(201);
    expect((await put(created.body.upload, bytes)).status).toBe(200);
    return created.body as { id: string; upload: Upload };
  }

  const send = (token: string, form: Record<string, string>) =>
    api.call('POST', '/v1/messages', { token, form: { conversation_id: conversationId, message: 'look', ...form } });

  it('uploads straight to storage, pending until the bytes are there, then uploaded', async () => {
    // Given alice asking to upload a 1 KiB PNG
    const bytes = randomBytes(1024);
    const created = await createFile(t.token, { name: 'photo.png', content_type: 'image/png', size: bytes.length });
    // Then she gets a pending file and a presigned PUT valid at most an hour
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^file_[0-9A-Z]{26}$/),
      name: 'photo.png',
      content_type: 'image/png',
      size: 1024,
      status: 'pending',
      upload: {
        url: expect.stringContaining('X-Amz-Signature='),
        method: 'PUT',
        headers: expect.any(Object),
        expires_at: expect.any(Number),
      },
      created_at: expect.any(Number),
    });
    expect(created.body.upload.expires_at - created.body.created_at).toBeLessThanOrEqual(3600);
    const shown = await api.call('GET', `/v1/files/${created.body.id}`, { token: t.token });
    expect(shown.body.status).toBe('pending');
    // When she PUTs the bytes with the upload's headers
    expect((await put(created.body.upload, bytes)).status).toBe(200);
    // Then the file shows uploaded
    const after = await api.call('GET', `/v1/files/${created.body.id}`, { token: t.token });
    expect(after.status).toBe(200);
    expect(after.body).toEqual({ ...created.body, status: 'uploaded', upload: null });
    // And only to her: bob's token finds no such file
    expect((await api.call('GET', `/v1/files/${created.body.id}`, { token: t.token2 })).status).toBe(404);
  });

  it('is refused by storage for another size or another content type, and nothing is stored', async () => {
    // Given an upload announced as 100 bytes of image/png
    const created = await createFile(t.token, { name: 'a.png', content_type: 'image/png', size: 100 });
    // When the client sends 101 bytes, or the right size as text/html
    const tooLong = await put(created.body.upload, randomBytes(101));
    const otherType = await put(created.body.upload, randomBytes(100), { 'Content-Type': 'text/html' });
    // Then storage refuses both, and the file stays pending
    expect(tooLong.status).toBe(403);
    expect(otherType.status).toBe(403);
    expect((await api.call('GET', `/v1/files/${created.body.id}`, { token: t.token })).body.status).toBe('pending');
  });

  it('takes the bytes once: the upload URL, used again before or after the file is attached, is refused and changes nothing', async () => {
    // Given alice's uploaded photo
    const bytes = randomBytes(2048);
    const file = await uploaded(t.token, bytes);
    // When the upload URL is used again with other bytes of the same size and type, before and after she sends it
    const again = await put(file.upload, randomBytes(2048));
    const sent = await send(t.token, { 'attachments[0][file_id]': file.id });
    expect(sent.status).toBe(201);
    const afterAttaching = await put(file.upload, randomBytes(2048));
    // Then storage refuses both as S3 refuses a conditional write on an existing object
    expect([again.status, afterAttaching.status]).toEqual([412, 412]);
    expect(await afterAttaching.text()).toContain('<Code>PreconditionFailed</Code>');
    // And bob downloads the bytes she uploaded first
    const read = await api.call('GET', `/v1/messages/${sent.body.id}`, { token: t.token2 });
    expect(sha256((await download(read.body.attachments[0].url)).bytes)).toBe(sha256(bytes));
  });

  it('refuses a file over MAX_FILE_BYTES, an empty one and a content type that is not a media type', async () => {
    const tooBig = await createFile(t.token, { name: 'big.bin', content_type: 'application/octet-stream', size: 25 * 1024 * 1024 + 1 });
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.error.param).toBe('size');
    expect((await createFile(t.token, { name: 'e.txt', content_type: 'text/plain', size: 0 })).body.error.param).toBe('size');
    expect((await createFile(t.token, { name: 'x', content_type: 'png', size: 1 })).body.error.param).toBe('content_type');
    expect((await createFile(t.token, { content_type: 'image/png', size: 1 })).body.error.param).toBe('name');
  });

  it('attaches an uploaded file, which each participant downloads through a URL made for them, and no one else reaches', async () => {
    // Given alice's uploaded photo
    const bytes = randomBytes(4096);
    const file = await uploaded(t.token, bytes);
    // When she sends it in her conversation with bob
    const sent = await send(t.token, { 'attachments[0][file_id]': file.id });
    expect(sent.status).toBe(201);
    // Then the attachment comes from the file, with a download URL
    expect(sent.body.attachments).toEqual([
      {
        id: expect.stringMatching(/^att_/),
        type: 'image',
        url: expect.stringContaining('X-Amz-Signature='),
        name: 'photo.png',
        mime_type: 'image/png',
        size: 4096,
        file_id: file.id,
      },
    ]);
    // And bob, reading the message, downloads the same bytes through his own URL
    const read = await api.call('GET', `/v1/messages/${sent.body.id}`, { token: t.token2 });
    expect(read.status).toBe(200);
    const got = await download(read.body.attachments[0].url);
    expect(got.status).toBe(200);
    expect(sha256(got.bytes)).toBe(sha256(bytes));
    // And his message list carries a URL too
    const page = await api.call('GET', '/v1/messages', { token: t.token2 });
    const listed = page.body.data.find((m: { id: string }) => m.id === sent.body.id);
    expect(sha256((await download(listed.attachments[0].url)).bytes)).toBe(sha256(bytes));
    // And a user of the account outside the thread cannot reach the message
    const dave = await anotherUserOf(t, `dave${Date.now()}`);
    expect((await api.call('GET', `/v1/messages/${sent.body.id}`, { token: dave.token })).status).toBe(404);
    // And a changed download URL is refused by storage
    const url = new URL(read.body.attachments[0].url);
    url.searchParams.set('X-Amz-Expires', '604800');
    expect((await fetch(url)).status).toBe(403);
    const otherKey = read.body.attachments[0].url.replace(file.id, (await uploaded(t.token, randomBytes(10))).id);
    expect((await fetch(otherKey)).status).toBe(403);
  });

  it("answers 404 for another user's file or an unknown one, 400 for one not uploaded yet", async () => {
    // Given bob's uploaded file, and alice's file not uploaded yet
    const bobs = await uploaded(t.token2, randomBytes(10));
    const pending = (await createFile(t.token, { name: 'later.pdf', content_type: 'application/pdf', size: 10 })).body;
    // When alice attaches each of them, or a file that never existed
    const others = await send(t.token, {
      'attachments[0][type]': 'file',
      'attachments[0][url]': 'https://x.example/a',
      'attachments[1][file_id]': bobs.id,
    });
    const unknown = await send(t.token, { 'attachments[0][file_id]': 'file_00000000000000000000000000' });
    const notYet = await send(t.token, { 'attachments[0][file_id]': pending.id });
    // Then the first two are 404 naming the attachment, the third 400, and no message was stored
    expect(others.status).toBe(404);
    expect(others.body.error.param).toBe('attachments[1][file_id]');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.param).toBe('attachments[0][file_id]');
    expect(notYet.status).toBe(400);
    expect(notYet.body.error).toMatchObject({ param: 'attachments[0][file_id]', code: 'file_not_uploaded' });
  });

  it("takes an attachment's type from its file's content type, and refuses a type given beside file_id", async () => {
    // Given alice's uploaded text file
    const file = await uploaded(t.token, randomBytes(10), 'text/plain', 'notes.txt');
    // When she attaches it calling it an image
    const typed = await send(t.token, { 'attachments[0][file_id]': file.id, 'attachments[0][type]': 'image' });
    // Then that is refused, naming the parameter, and without it the type is the content type's: a file
    expect(typed.status).toBe(400);
    expect(typed.body.error).toMatchObject({ code: 'parameter_unknown', param: 'attachments[0][type]' });
    const sent = await send(t.token, { 'attachments[0][file_id]': file.id });
    expect(sent.body.attachments[0]).toMatchObject({ type: 'file', mime_type: 'text/plain', file_id: file.id });
  });

  it('keeps external https attachments working beside uploaded files', async () => {
    const file = await uploaded(t.token, randomBytes(10), 'application/pdf', 'report.pdf');
    const sent = await send(t.token, {
      'attachments[0][type]': 'image',
      'attachments[0][url]': 'https://cdn.example.com/a.png',
      'attachments[1][file_id]': file.id,
    });
    expect(sent.status).toBe(201);
    expect(sent.body.attachments[0]).toEqual({
      id: expect.any(String),
      type: 'image',
      url: 'https://cdn.example.com/a.png',
      name: null,
      mime_type: null,
      size: null,
      file_id: null,
    });
    expect(sent.body.attachments[1]).toMatchObject({ type: 'file', name: 'report.pdf', mime_type: 'application/pdf', file_id: file.id });
  });

  it('deletes the file when the message attaching it is deleted', async () => {
    // Given a message with an uploaded file
    const file = await uploaded(t.token, randomBytes(10));
    const sent = await send(t.token, { 'attachments[0][file_id]': file.id });
    expect(await objectThere(t.accountId, file.id)).toBe(true);
    // When alice deletes the message
    expect((await api.call('DELETE', `/v1/messages/${sent.body.id}`, { token: t.token })).status).toBe(200);
    // Then the object is gone within a minute, and so is the file
    await eventually(async () => !(await objectThere(t.accountId, file.id)), {
      what: "the deleted message's file gone",
      timeoutMs: 60_000,
    });
    expect((await api.call('GET', `/v1/files/${file.id}`, { token: t.token })).status).toBe(404);
  });

  it('deletes the file when its attachment is removed, and keeps one another message still attaches', async () => {
    // Given one file attached to two messages
    const file = await uploaded(t.token, randomBytes(10));
    const first = await send(t.token, { 'attachments[0][file_id]': file.id });
    const second = await send(t.token, { 'attachments[0][file_id]': file.id });
    // When the first message's attachments are removed
    const cleared = await api.call('PUT', `/v1/messages/${first.body.id}`, { token: t.token, form: { attachments: '' } });
    expect(cleared.status).toBe(200);
    expect(cleared.body.attachments).toEqual([]);
    // Then the file stays (the second still attaches it)
    expect(await objectThere(t.accountId, file.id)).toBe(true);
    // When the second message's attachments are removed too
    await api.call('PUT', `/v1/messages/${second.body.id}`, { token: t.token, form: { attachments: '' } });
    // Then the object is gone
    await eventually(async () => !(await objectThere(t.accountId, file.id)), { what: 'the released file gone', timeoutMs: 60_000 });
  });

  it('deletes the file once neither participant has the thread: kept while one still has it', async () => {
    // Given alice and bob's thread holding alice's file, from a fresh pair so each can delete their conversation
    const pair = await aTenant();
    const alices = (await api.call('POST', '/v1/conversations', { token: pair.token, form: { contact_id: pair.contactIds.bob! } })).body.id;
    const file = await uploaded(pair.token, randomBytes(10));
    const sent = await api.call('POST', '/v1/messages', {
      token: pair.token,
      form: { conversation_id: alices, message: 'file', 'attachments[0][file_id]': file.id },
    });
    expect(sent.status).toBe(201);
    const bobs = (await api.call('GET', '/v1/conversations', { token: pair.token2 })).body.data[0].id;
    // When alice deletes her conversation
    expect((await api.call('DELETE', `/v1/conversations/${alices}`, { token: pair.token })).status).toBe(200);
    // Then bob still downloads the file
    const read = await api.call('GET', `/v1/messages/${sent.body.id}`, { token: pair.token2 });
    expect((await download(read.body.attachments[0].url)).status).toBe(200);
    // When bob deletes his too
    expect((await api.call('DELETE', `/v1/conversations/${bobs}`, { token: pair.token2 })).status).toBe(200);
    // Then the file is gone
    await eventually(async () => !(await objectThere(pair.accountId, file.id)), {
      what: "the unread thread's file gone",
      timeoutMs: 60_000,
    });
  });

  it('appends an uploaded file on PUT', async () => {
    const file = await uploaded(t.token, randomBytes(10));
    const sent = await send(t.token, {});
    const updated = await api.call('PUT', `/v1/messages/${sent.body.id}`, { token: t.token, form: { 'attachments[0][file_id]': file.id } });
    expect(updated.status).toBe(200);
    expect(updated.body.attachments).toMatchObject([{ file_id: file.id, url: expect.stringContaining('X-Amz-Signature=') }]);
  });
});

describe('files after a crash, and never attached', () => {
  let api: ApiClient;
  let t: Tenant;
  let conversationId: string;

  beforeAll(async () => {
    api = await apiClient('messaging', 'handler');
    t = await aTenant();
    conversationId = (await api.call('POST', '/v1/conversations', { token: t.token, form: { contact_id: t.contactIds.bob! } })).body.id;
  });
  afterAll(() => api.close());

  async function uploaded(bytes: Uint8Array) {
    const created = await api.call('POST', '/v1/files', {
      token: t.token,
      form: { name: 'a.png', content_type: 'image/png', size: bytes.length },
    });
    expect((await put(created.body.upload, bytes)).status).toBe(200);
    return created.body.id as string;
  }

  it('deletes the file of a message deleted by a request that died before deleting it', async () => {
    // Given a message with an uploaded file
    const fileId = await uploaded(randomBytes(10));
    const sent = await api.call('POST', '/v1/messages', {
      token: t.token,
      form: { conversation_id: conversationId, message: 'x', 'attachments[0][file_id]': fileId },
    });
    // When the delete commits but its process cannot reach storage afterwards (as if it died there)
    const endpoint = process.env.AWS_ENDPOINT_URL_S3;
    process.env.AWS_ENDPOINT_URL_S3 = 'http://127.0.0.1:9';
    resetStorage();
    try {
      expect((await api.call('DELETE', `/v1/messages/${sent.body.id}`, { token: t.token })).status).toBe(200);
    } finally {
      process.env.AWS_ENDPOINT_URL_S3 = endpoint;
      resetStorage();
    }
    // Then the file is still there, its deletion on record
    expect(await objectThere(t.accountId, fileId)).toBe(true);
    const ref = { accountId: t.accountId, subject: `FILE#${fileId}` };
    expect(await jobOf(ref)).toBeDefined();
    // When the dead chain's lease runs out and the sweeper queues the job again, and the purge worker runs it
    await timePasses(ref, 10 * 60_000);
    await sweeper();
    await purgeWorker(jobEvent({ kind: 'file-release', accountId: t.accountId, subject: ref.subject, chain: 'after-the-crash' }));
    // Then the object and the job are gone
    expect(await objectThere(t.accountId, fileId)).toBe(false);
    expect(await jobOf(ref)).toBeUndefined();
  });

  it('deletes an upload never attached once its 24 h are up, and not before', async () => {
    // Given two uploads never attached, one of them from more than a day ago
    const old = await uploaded(randomBytes(10));
    const fresh = await uploaded(randomBytes(10));
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.file.key({ acct: t.accountId, file: old }),
        UpdateExpression: 'SET gsi2sk = :due',
        ExpressionAttributeValues: { ':due': keys.unattachedFiles.sortKey({ ms: Date.now() - 1000 }) },
      }),
    );
    // When the sweeper runs
    await sweeper();
    // Then the old one is gone, record and object, and the fresh one is not
    expect((await api.call('GET', `/v1/files/${old}`, { token: t.token })).status).toBe(404);
    expect(await objectThere(t.accountId, old)).toBe(false);
    expect(await objectThere(t.accountId, fresh)).toBe(true);
  });
});

describe('files on the realtime socket and in the events feed', () => {
  let stack: Awaited<ReturnType<typeof realtimeStack>>;
  beforeAll(async () => {
    stack = await realtimeStack();
  });
  afterAll(() => stack?.stop());

  it("carries a download URL made for the reader in bob's frame and in his feed, never stored in the feed", async () => {
    // Given bob connected, and alice's uploaded file
    const t = await aTenant();
    const api = stack.messaging;
    const bob = await stack.connect(t.token2, { via: 'protocol' });
    const conv = (await api.call('POST', '/v1/conversations', { token: t.token, form: { contact_id: t.contactIds.bob! } })).body.id;
    const bytes = randomBytes(256);
    const created = await api.call('POST', '/v1/files', { token: t.token, form: { name: 'a.png', content_type: 'image/png', size: 256 } });
    expect((await put(created.body.upload, bytes)).status).toBe(200);
    // When alice sends it
    const sent = await api.call('POST', '/v1/messages', {
      token: t.token,
      form: { conversation_id: conv, message: 'pic', 'attachments[0][file_id]': created.body.id },
    });
    // Then bob's frame carries a URL that downloads the bytes
    await eventually(async () => bob.frames.some((f) => f.type === 'message.created'), { what: "bob's frame", timeoutMs: 15_000 });
    const frame = bob.frames.find((f) => f.type === 'message.created')!;
    const fromFrame = (frame.data.object as unknown as { attachments: { url: string; file_id: string }[] }).attachments[0]!;
    expect(fromFrame.file_id).toBe(created.body.id);
    expect(sha256((await download(fromFrame.url)).bytes)).toBe(sha256(bytes));
    // And his feed's event carries one too
    const feed = await api.call('GET', '/v1/events', { token: t.token2 });
    const event = feed.body.data.find((e: { type: string; data: { object: { id: string } } }) => e.data.object.id === sent.body.id);
    expect(sha256((await download(event.data.object.attachments[0].url)).bytes)).toBe(sha256(bytes));
    // And the feed stores none: the stored event has no URL for the file
    const partition = feedPartition({ accountId: t.accountId, contactId: t.contactIds.bob! });
    const stored = await getItem(
      keys.userEvent.key({ acct: t.accountId, user: t.contactIds.bob!, seq: feedPosition(partition, event.id)!.seq }),
      true,
    );
    expect(JSON.parse(String(stored?.body)).data.object.attachments[0].url).toBeNull();
  });
});
