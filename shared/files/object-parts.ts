import { call, failed, objectSize } from '#shared/files/storage';

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
