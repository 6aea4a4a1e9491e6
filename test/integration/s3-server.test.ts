import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SignatureV4 } from '@smithy/signature-v4';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startS3Server, type RunningS3Server } from '../../scripts/local/s3-server.ts';
import { Sha256 } from '../../scripts/local/sha256.ts';

const bucket = 'files-test';
const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
const origin = 'http://app.example';
const signer = new SignatureV4({
  service: 's3',
  region: 'us-east-1',
  credentials,
  sha256: Sha256,
  uriEscapePath: false,
  applyChecksum: false,
});

let dataDir: string;
let server: RunningS3Server;
beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 's3-server-test-'));
  server = await startS3Server({ port: 0, dataDir, bucket, credentials, corsOrigins: [origin] });
});
afterAll(async () => {
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

interface Place {
  endpoint: string;
  bucket: string;
}
const here = (): Place => ({ endpoint: server.endpoint, bucket });
const objectUrl = (key: string, at: Place = here()) => new URL(`${at.endpoint}/${at.bucket}/${key}`);
const toUrl = (signed: { path: string; query?: Record<string, unknown> }, at: Place) => {
  const url = new URL(signed.path, at.endpoint);
  for (const [name, value] of Object.entries(signed.query ?? {})) url.searchParams.set(name, String(value));
  return url;
};

/** A presigned URL as the files API makes one: the payload unsigned, the other headers named signed and sent by the client. */
async function presign(
  method: string,
  key: string,
  headers: Record<string, string> = {},
  options: { expiresIn?: number; signingDate?: Date; at?: Place } = {},
) {
  const at = options.at ?? here();
  const url = objectUrl(key, at);
  const signed = await signer.presign(
    {
      method,
      protocol: 'http:',
      hostname: url.hostname,
      port: Number(url.port),
      path: url.pathname,
      query: {},
      // Hoisted into the query, as the AWS presigner does: S3 reads a presigned request's payload as unsigned.
      headers: { host: url.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', ...headers },
    },
    { expiresIn: options.expiresIn ?? 300, signingDate: options.signingDate, unhoistableHeaders: new Set(Object.keys(headers)) },
  );
  return toUrl(signed, at);
}

const upload = (bytes: Buffer, contentType = 'image/png') => ({
  'content-length': String(bytes.length),
  'content-type': contentType,
  'x-amz-tagging': 'state=unattached',
});

async function errorOf(response: Response) {
  const body = await response.text();
  return { status: response.status, code: /<Code>([^<]*)<\/Code>/.exec(body)?.[1], message: /<Message>([^<]*)<\/Message>/.exec(body)?.[1] };
}

/** A presigned GET's status: 200, or 403 for a key that holds nothing (S3's answer to a signer without s3:ListBucket). */
async function stored(key: string): Promise<number> {
  const response = await fetch(await presign('GET', key));
  await response.arrayBuffer();
  return response.status;
}

const put = (url: URL, body: Buffer, headers: Record<string, string>) => fetch(url, { method: 'PUT', body, headers });
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

describe('the local S3 server', () => {
  it('stores what a presigned PUT uploads, and a presigned GET returns the same bytes', async () => {
    // Given a presigned upload for 4 KiB of PNG, tagged as not attached yet
    const key = `uploads/${randomUUID()}`;
    const bytes = Buffer.from(Array.from({ length: 4096 }, (_, i) => i % 251));
    const url = await presign('PUT', key, upload(bytes));

    // When the client sends exactly that
    const response = await put(url, bytes, { 'content-type': 'image/png', 'x-amz-tagging': 'state=unattached' });

    // Then it is stored, with an ETag a browser may read, and a presigned GET returns the same bytes
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toBeTruthy();
    const download = await fetch(await presign('GET', key));
    expect(download.status).toBe(200);
    expect(sha256(new Uint8Array(await download.arrayBuffer()))).toBe(sha256(bytes));

    // And a presigned URL that names a payload hash of its own (hoisted into the query) is checked with that hash
    const hashed = await signer.presign(
      {
        method: 'GET',
        protocol: 'http:',
        hostname: '127.0.0.1',
        path: `/${bucket}/${key}`,
        query: {},
        headers: { host: objectUrl(key).host, 'x-amz-content-sha256': sha256(new Uint8Array()) },
      },
      { expiresIn: 60 },
    );
    expect((await fetch(toUrl(hashed, here()))).status).toBe(200);
  });

  it('reads a version by its ETag (If-Match), as S3 does, and refuses the read once the object was replaced', async () => {
    // Given an object, and its ETag as a reader that resumes it later keeps it
    const key = `imports/${randomUUID()}`;
    const first = Buffer.from('email\na@example.com\nb@example.com\n');
    const written = await put(await presign('PUT', key, upload(first, 'text/csv')), first, {
      'content-type': 'text/csv',
      'x-amz-tagging': 'state=unattached',
    });
    const etag = written.headers.get('etag')!;
    // When it is read from a byte on with that ETag: then storage answers the rest
    const ranged = await fetch(await presign('GET', key), { headers: { 'If-Match': etag, Range: 'bytes=6-' } });
    expect(ranged.status).toBe(206);
    expect(await ranged.text()).toBe('a@example.com\nb@example.com\n');
    // When the object is replaced and read again with the first ETag: then storage refuses it
    const second = Buffer.from('email\nz@example.com\n');
    await put(await presign('PUT', key, upload(second, 'text/csv')), second, {
      'content-type': 'text/csv',
      'x-amz-tagging': 'state=unattached',
    });
    const stale = await fetch(await presign('GET', key), { headers: { 'If-Match': etag, Range: 'bytes=6-' } });
    expect(await errorOf(stale)).toMatchObject({ status: 412, code: 'PreconditionFailed' });
    const staleHead = await fetch(await presign('HEAD', key), { method: 'HEAD', headers: { 'If-Match': etag } });
    expect(staleHead.status).toBe(412);
  });

  it('refuses a presigned PUT for anything but what was signed, as S3 does, and stores nothing', async () => {
    const bytes = Buffer.alloc(1000, 7);
    const sent = { 'content-type': 'image/png', 'x-amz-tagging': 'state=unattached' };
    const expired = { expiresIn: 60, signingDate: new Date(Date.now() - 120_000) };
    const cases: [string, (key: string) => Promise<Response>, { status: number; code: string; message?: string }][] = [
      ['another size', async (key) => put(await presign('PUT', key, upload(bytes)), Buffer.alloc(1001, 7), sent), signatureMismatch()],
      [
        'another content type',
        async (key) => put(await presign('PUT', key, upload(bytes)), bytes, { ...sent, 'content-type': 'text/html' }),
        signatureMismatch(),
      ],
      [
        'a signed header left out',
        async (key) => put(await presign('PUT', key, upload(bytes)), bytes, { 'content-type': 'image/png' }),
        signatureMismatch(),
      ],
      [
        'another key',
        async (key) => {
          const url = await presign('PUT', `${key}-signed`, upload(bytes));
          url.pathname = `/${bucket}/${key}`;
          return put(url, bytes, sent);
        },
        signatureMismatch(),
      ],
      [
        'a longer expiry',
        async (key) => {
          const url = await presign('PUT', key, upload(bytes), expired);
          url.searchParams.set('X-Amz-Expires', '3600');
          return put(url, bytes, sent);
        },
        signatureMismatch(),
      ],
      [
        'an expiry over a week',
        async (key) => {
          const url = await presign('PUT', key, upload(bytes));
          url.searchParams.set('X-Amz-Expires', '604801');
          return put(url, bytes, sent);
        },
        { status: 400, code: 'AuthorizationQueryParametersError' },
      ],
      [
        'after its expiry',
        async (key) => put(await presign('PUT', key, upload(bytes), expired), bytes, sent),
        { status: 403, code: 'AccessDenied', message: 'Request has expired' },
      ],
      ['no signature at all', async (key) => put(objectUrl(key), bytes, sent), { status: 403, code: 'AccessDenied' }],
      [
        'an unknown access key',
        async (key) => {
          const url = await presign('PUT', key, upload(bytes));
          url.searchParams.set('X-Amz-Credential', url.searchParams.get('X-Amz-Credential')!.replace(/^local\//, 'other/'));
          return put(url, bytes, sent);
        },
        { status: 403, code: 'InvalidAccessKeyId' },
      ],
      [
        'an x-amz header it did not sign',
        async (key) => put(await presign('PUT', key, upload(bytes)), bytes, { ...sent, 'x-amz-acl': 'public-read' }),
        { status: 403, code: 'AccessDenied', message: 'There were headers present in the request which were not signed: x-amz-acl' },
      ],
    ];
    for (const [what, send, refusal] of cases) {
      // Given a key nothing was stored under
      const key = `uploads/${randomUUID()}`;

      // When a PUT comes with <what>
      const response = await send(key);

      // Then storage refuses it with S3's error, and nothing is stored
      expect(await errorOf(response), what).toMatchObject(refusal);
      expect(await stored(key), what).toBe(403);
    }
  });

  it('takes a request signed in the Authorization header, and refuses it unsigned', async () => {
    // Given a stored object
    const key = `uploads/${randomUUID()}`;
    const bytes = Buffer.from('to be deleted');
    expect(
      (
        await put(await presign('PUT', key, upload(bytes, 'text/plain')), bytes, {
          'content-type': 'text/plain',
          'x-amz-tagging': 'state=unattached',
        })
      ).status,
    ).toBe(200);

    // When it is deleted without a signature, then with one in the Authorization header (as the SDK signs)
    const unsigned = await fetch(objectUrl(key), { method: 'DELETE' });
    const stillThere = await stored(key);
    const url = objectUrl(key);
    const signed = await signer.sign({
      method: 'DELETE',
      protocol: 'http:',
      hostname: url.hostname,
      port: Number(url.port),
      path: url.pathname,
      query: {},
      headers: { host: url.host, 'x-amz-content-sha256': sha256(new Uint8Array()) },
    });
    const deleted = await fetch(url, { method: 'DELETE', headers: signed.headers });

    // Then the unsigned one is refused and changes nothing, the signed one deletes
    expect(await errorOf(unsigned)).toMatchObject({ status: 403, code: 'AccessDenied' });
    expect(stillThere).toBe(200);
    expect(deleted.status).toBe(204);
    expect(await stored(key)).toBe(403);

    // And a header signature over other headers than sent is refused
    const tampered = await fetch(url, { method: 'DELETE', headers: { ...signed.headers, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } });
    expect(await errorOf(tampered)).toMatchObject(signatureMismatch());
  });

  it("is the tests' and npm start's storage: AWS_ENDPOINT_URL_S3 and FILES_BUCKET name a bucket that takes signed uploads only", async () => {
    // Given the environment the local runtime gives every function
    const at = { endpoint: process.env.AWS_ENDPOINT_URL_S3!, bucket: process.env.FILES_BUCKET! };
    expect(at.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const key = `uploads/${randomUUID()}`;
    const bytes = Buffer.from('hello');
    const headers = { 'content-type': 'text/plain', 'x-amz-tagging': 'state=unattached' };

    // When an upload comes unsigned, then presigned
    const unsigned = await put(objectUrl(key, at), bytes, headers);
    const signed = await put(await presign('PUT', key, upload(bytes, 'text/plain'), { at }), bytes, headers);

    // Then only the presigned one is stored
    expect(await errorOf(unsigned)).toMatchObject({ status: 403, code: 'AccessDenied' });
    expect(signed.status).toBe(200);
    const download = await fetch(await presign('GET', key, {}, { at }));
    expect(await download.text()).toBe('hello');
  });

  it('answers a CORS preflight from an allowed origin without credentials, as S3 does', async () => {
    // When a browser at an allowed origin asks whether it may PUT with the signed headers
    const response = await fetch(objectUrl(`uploads/${randomUUID()}`), {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'PUT', 'access-control-request-headers': 'content-type,x-amz-tagging' },
    });

    // Then it may
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toMatch(/^(\*|http:\/\/app\.example)$/);
    expect(response.headers.get('access-control-allow-methods')).toContain('PUT');
    expect(response.headers.get('access-control-allow-headers')).toContain('x-amz-tagging');
  });
});

function signatureMismatch() {
  return { status: 403, code: 'SignatureDoesNotMatch' };
}
