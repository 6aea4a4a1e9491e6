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

export interface SignRequest {
  method: 'GET' | 'PUT' | 'HEAD' | 'DELETE' | 'POST';
  key: string;
  expiresIn: number;
  /** Signed headers the request must send as they are (besides host). */
  headers?: Record<string, string>;
  query?: Record<string, string>;
  /** When it is signed (now unless told): an upload is signed at its file's creation, so it expires an hour after `created_at`. */
  at?: Date;
}

export async function presign(r: SignRequest): Promise<Presigned> {
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

/**
 * A PUT that S3 takes only with this size, this content type and the unattached tag (so the bucket's lifecycle rule
 * expires it until attached), and only once: `If-None-Match: *` makes S3 refuse it (412) once the object exists. The
 * URL stays valid for its hour, and a second PUT would replace the bytes other readers download, and, since a PUT
 * replaces an object's tags, mark an attached file unattached for the lifecycle rule to delete.
 */
export const uploadUrl = (key: string, contentType: string, size: number, expiresIn: number, at?: Date) =>
  presign({
    method: 'PUT',
    key,
    expiresIn,
    at,
    headers: { 'Content-Type': contentType, 'Content-Length': String(size), 'x-amz-tagging': UNATTACHED_TAG, 'If-None-Match': '*' },
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

/** A call this service makes itself, as a request presigned for a minute. */
export async function call(r: Omit<SignRequest, 'expiresIn'>, body?: string | Uint8Array, timeoutMs = CALL_TIMEOUT_MS): Promise<Response> {
  const { url } = await presign({ ...r, expiresIn: 60 });
  const headers = r.headers ?? {};
  return fetch(url, { method: r.method, headers, ...(body === undefined ? {} : { body }), signal: AbortSignal.timeout(timeoutMs) });
}

export function failed(what: string, response: Response): Error {
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
