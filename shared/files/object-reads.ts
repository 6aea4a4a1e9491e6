import { failed, presign, UNATTACHED_TAG } from '#shared/files/storage';

/* Creating an import's upload, and reading it back as a stream from any byte on (a CSV import). */

/** What a CSV import's upload must be sent as. */
export const CSV_CONTENT_TYPE = 'text/csv';

/**
 * A PUT of a CSV import: its content type and the unattached tag (the
 * lifecycle rule removes an object the import never got to delete), but
 * no length, which the client cannot be asked to know in advance; the
 * import checks the size it finds. Once only (`If-None-Match: *`): a
 * second PUT while the file is read would change the rows under the
 * import, which then ends in error; refused, it leaves the first file.
 */
export const importUploadUrl = (key: string, expiresIn: number) =>
  presign({
    method: 'PUT',
    key,
    expiresIn,
    headers: { 'Content-Type': CSV_CONTENT_TYPE, 'x-amz-tagging': UNATTACHED_TAG, 'If-None-Match': '*' },
  });

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
