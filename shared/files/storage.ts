import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';

/**
 * The files bucket, through presigned requests only: upload and download
 * URLs for clients, and the few calls this service makes itself (is the
 * object there, tag it, delete it) as requests it presigns and sends. One
 * signer (the SDK's own SigV4 implementation) instead of an S3 client in
 * every function that shows a message: docs/performance.md says what that
 * saves at cold start.
 */

/** What S3 asks of a PUT to a presigned URL: these headers, exactly, or it refuses the request. */
export const UNATTACHED_TAG = 'state=unattached';
const ATTACHED_TAGGING = '<Tagging><TagSet><Tag><Key>state</Key><Value>attached</Value></Tag></TagSet></Tagging>';
const CALL_TIMEOUT_MS = 5_000;

/** node:crypto as the signer's hash (the SDK's @smithy/hash-node does the same). */
class Sha256 {
  private readonly hash: Hash | Hmac;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    const key = secret instanceof ArrayBuffer ? new Uint8Array(secret) : secret;
    this.hash = key === undefined ? createHash('sha256') : createHmac('sha256', key as string | Uint8Array);
  }
  update(data: string | Uint8Array): void {
    this.hash.update(data);
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(this.hash.digest());
  }
}

interface Target {
  bucket: string;
  region: string;
  /** Path-style base (a local or LocalStack endpoint); virtual-hosted S3 otherwise. */
  endpoint?: URL;
}

let signer: SignatureV4 | undefined;

function target(): Target {
  const bucket = process.env.FILES_BUCKET;
  if (!bucket) throw new Error('FILES_BUCKET is not set: this function has no access to the files bucket');
  const region = process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1';
  const endpoint = process.env.AWS_ENDPOINT_URL_S3 ?? process.env.AWS_ENDPOINT_URL;
  return { bucket, region, ...(endpoint ? { endpoint: new URL(endpoint) } : {}) };
}

function signerFor(region: string): SignatureV4 {
  // Lambda's role credentials are in the environment for the container's life; read each time, so tests may change them.
  signer ??= new SignatureV4({
    service: 's3',
    region,
    sha256: Sha256,
    uriEscapePath: false,
    applyChecksum: false,
    credentials: async () => ({
      accessKeyId: process.env.AWS_ACCESS_KEY_ID ?? '',
      secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY ?? '',
      ...(process.env.AWS_SESSION_TOKEN ? { sessionToken: process.env.AWS_SESSION_TOKEN } : {}),
    }),
  });
  return signer;
}

/** Forget the signer (tests that point the process at other credentials or another region). */
export const resetStorage = () => {
  signer = undefined;
};

export interface Presigned {
  url: string;
  /** Headers the request must carry as signed. */
  headers: Record<string, string>;
  expiresAt: number;
}

interface SignRequest {
  method: 'GET' | 'PUT' | 'HEAD' | 'DELETE' | 'POST';
  key: string;
  expiresIn: number;
  /** Signed headers the request must send as they are (besides host). */
  headers?: Record<string, string>;
  query?: Record<string, string>;
  /** When it is signed (now unless told): an upload is signed at its file's creation, so it expires an hour after `created_at`. */
  at?: Date;
}

async function presign(r: SignRequest): Promise<Presigned> {
  const t = target();
  const host = t.endpoint ? t.endpoint.host : `${t.bucket}.s3.${t.region}.amazonaws.com`;
  const basePath = t.endpoint ? `${t.endpoint.pathname.replace(/\/$/, '')}/${t.bucket}` : '';
  // A presigned request's payload is never hashed (S3 reads UNSIGNED-PAYLOAD, hoisted into the query as the SDK's presigner does).
  const headers = { ...r.headers, host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' };
  const now = r.at ?? new Date();
  const signed = await signerFor(t.region).presign(
    {
      method: r.method,
      protocol: t.endpoint?.protocol ?? 'https:',
      hostname: t.endpoint?.hostname ?? host,
      ...(t.endpoint?.port ? { port: Number(t.endpoint.port) } : {}),
      path: `${basePath}/${r.key}`,
      query: { ...r.query },
      headers,
    },
    {
      expiresIn: r.expiresIn,
      signingDate: now,
      unhoistableHeaders: new Set(Object.keys(r.headers ?? {}).map((h) => h.toLowerCase())),
    },
  );
  const query = new URLSearchParams(signed.query as Record<string, string>).toString().replace(/\+/g, '%20');
  const origin = t.endpoint ? t.endpoint.origin : `https://${host}`;
  // Content-Length is signed but not handed out: every client sets it from the body (a browser may not set it at all).
  const { 'Content-Length': _length, ...send } = r.headers ?? {};
  return { url: `${origin}${signed.path}?${query}`, headers: send, expiresAt: Math.floor(now.getTime() / 1000) + r.expiresIn };
}

/** A PUT that S3 takes only with this size, this content type and the unattached tag (so the bucket's lifecycle rule expires it until attached). */
export const uploadUrl = (key: string, contentType: string, size: number, expiresIn: number, at?: Date) =>
  presign({
    method: 'PUT',
    key,
    expiresIn,
    at,
    headers: { 'Content-Type': contentType, 'Content-Length': String(size), 'x-amz-tagging': UNATTACHED_TAG },
  });

/** A GET of the object, sent as a download under its name (never rendered inline by the browser as the bucket's page). */
export const downloadUrl = async (key: string, name: string, expiresIn: number) =>
  (
    await presign({
      method: 'GET',
      key,
      expiresIn,
      query: { 'response-content-disposition': `attachment; filename*=UTF-8''${encodeURIComponent(name)}` },
    })
  ).url;

async function call(r: Omit<SignRequest, 'expiresIn'>, body?: string | Uint8Array, timeoutMs = CALL_TIMEOUT_MS): Promise<Response> {
  const { url } = await presign({ ...r, expiresIn: 60 });
  const headers = r.headers ?? {};
  return fetch(url, { method: r.method, headers, ...(body === undefined ? {} : { body }), signal: AbortSignal.timeout(timeoutMs) });
}

function failed(what: string, response: Response): Error {
  return new Error(`${what} answered ${response.status}`);
}

/** The object's size, or undefined when it is not there (yet). */
export async function objectSize(key: string): Promise<number | undefined> {
  const response = await call({ method: 'HEAD', key });
  if (response.status === 404 || response.status === 403) return undefined;
  if (!response.ok) throw failed('checking a file in storage', response);
  return Number(response.headers.get('content-length'));
}

/** Retags an attached file so the lifecycle rule for unattached uploads leaves it alone. */
export async function tagAttached(key: string): Promise<void> {
  const md5 = createHash('md5').update(ATTACHED_TAGGING).digest('base64');
  const response = await call({ method: 'PUT', key, query: { tagging: '' }, headers: { 'Content-MD5': md5 } }, ATTACHED_TAGGING);
  await response.body?.cancel();
  if (!response.ok) throw failed('tagging a file in storage', response);
}

/** Deletes the object; one already gone is no error. */
export async function deleteObject(key: string): Promise<void> {
  const response = await call({ method: 'DELETE', key });
  await response.body?.cancel();
  if (!response.ok && response.status !== 404) throw failed('deleting a file from storage', response);
}

/** What a CSV import's upload must be sent as. */
export const CSV_CONTENT_TYPE = 'text/csv';

/**
 * A PUT of a CSV import: its content type and the unattached tag (the
 * lifecycle rule removes an object the import never got to delete), but
 * no length, which the client cannot be asked to know in advance; the
 * import checks the size it finds.
 */
export const importUploadUrl = (key: string, expiresIn: number) =>
  presign({ method: 'PUT', key, expiresIn, headers: { 'Content-Type': CSV_CONTENT_TYPE, 'x-amz-tagging': UNATTACHED_TAG } });

export interface ObjectRead {
  body: ReadableStream<Uint8Array>;
  /** Identifies the object's version: a read resumed later asks for the same one. */
  etag: string;
}

/**
 * The object's bytes from `fromByte` on, as a stream the caller consumes
 * (or cancels through `signal`); undefined when it is not there, or no
 * longer the version `etag` names. No timeout on the body: a large object
 * takes as long as its reader does.
 */
export async function readObject(key: string, fromByte: number, signal: AbortSignal, etag?: string): Promise<ObjectRead | undefined> {
  const { url } = await presign({ method: 'GET', key, expiresIn: 15 * 60 });
  const headers: Record<string, string> = {};
  if (fromByte > 0) headers.Range = `bytes=${fromByte}-`;
  if (etag) headers['If-Match'] = etag;
  const response = await fetch(url, { headers, signal });
  if (response.status === 404 || response.status === 403 || response.status === 412) {
    await response.body?.cancel();
    return undefined;
  }
  // Nothing left after the offset: an empty read.
  if (response.status === 416) {
    await response.body?.cancel();
    return { body: new Blob([]).stream(), etag: etag ?? '' };
  }
  if (!response.ok || !response.body) throw failed('reading a file from storage', response);
  return { body: response.body, etag: response.headers.get('etag') ?? '' };
}

/*
 * Writing an object in parts (a CSV export): S3's multipart upload as three
 * presigned calls, so the worker that streams an export needs no S3 client
 * either. Each part but the last is at least PART_MIN_BYTES; a part sent
 * again under its number replaces the first, so a retried step is harmless.
 * Uploads never completed are aborted by the bucket's lifecycle rule.
 */

/** S3's smallest part but the last. */
export const PART_MIN_BYTES = 5 * 1024 * 1024;
/** A part is up to a few MiB sent from a Lambda: more time than a HEAD. */
const PART_TIMEOUT_MS = 60_000;

/** An object written in one request (small enough to need no parts). */
export async function putObject(key: string, body: Uint8Array, contentType: string): Promise<void> {
  const response = await call({ method: 'PUT', key, headers: { 'Content-Type': contentType } }, body, PART_TIMEOUT_MS);
  await response.body?.cancel();
  if (!response.ok) throw failed('writing a file to storage', response);
}

/** Starts a multipart upload; resolves to its upload id. */
export async function startUpload(key: string, contentType: string): Promise<string> {
  const response = await call({ method: 'POST', key, query: { uploads: '' }, headers: { 'Content-Type': contentType } });
  const text = await response.text();
  const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec(text)?.[1];
  if (!response.ok || !uploadId) throw failed('starting an upload in parts', response);
  return unescapeXml(uploadId);
}

/** Sends part `partNumber` (from 1); resolves to its ETag, which completing the upload names. */
export async function uploadPart(key: string, uploadId: string, partNumber: number, body: Uint8Array): Promise<string> {
  const query = { partNumber: String(partNumber), uploadId };
  const response = await call({ method: 'PUT', key, query }, body, PART_TIMEOUT_MS);
  await response.body?.cancel();
  const etag = response.headers.get('etag');
  if (!response.ok || !etag) throw failed(`sending part ${partNumber} of an upload`, response);
  return etag;
}

/**
 * Joins the parts (ETags in part order) into the object. Completing again
 * an upload that completed (a step retried after a crash) finds the upload
 * gone: the object there is the answer then.
 */
export async function completeUpload(key: string, uploadId: string, etags: string[]): Promise<void> {
  const parts = etags.map((etag, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>${escapeXml(etag)}</ETag></Part>`).join('');
  const body = `<CompleteMultipartUpload>${parts}</CompleteMultipartUpload>`;
  const response = await call(
    { method: 'POST', key, query: { uploadId }, headers: { 'Content-Type': 'application/xml' } },
    body,
    PART_TIMEOUT_MS,
  );
  const text = await response.text();
  // S3 may answer 200 and still report an error in the body (a failure while it joined the parts).
  if (response.ok && !text.includes('<Error>')) return;
  if (response.status === 404 && (await objectSize(key)) !== undefined) return;
  throw failed('completing an upload in parts', response);
}

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };
const escapeXml = (s: string) => s.replace(/[&<>"']/g, (c) => XML_ESCAPES[c]!);
const unescapeXml = (s: string) => s.replace(/&(amp|lt|gt|quot|apos);/g, (e) => Object.entries(XML_ESCAPES).find(([, x]) => x === e)![0]);
