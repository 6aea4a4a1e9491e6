import { getFile, markUploaded, putFile, type FileRecord } from '#shared/data/files';
import type { Principal } from '#shared/data/tokens';
import { invalid, notFound } from '#shared/errors';
import { contentTypeAllowed, maxFileBytes, URL_SECONDS } from '#shared/files/settings';
import { objectSize, uploadUrl, type Presigned } from '#shared/files/storage';
import type { Hold } from '#shared/data/idempotency';
import { derivedId, looksLikeId, newId } from '#shared/util/ids';

/** Where a file's bytes are: one prefix per account, so an account's files can be found (and removed) together. */
export const objectKey = (accountId: string, fileId: string) => `files/${accountId}/${fileId}`;

export interface NewFile {
  name: string;
  content_type: string;
  size: number;
}

const presentUpload = (p: Presigned) => ({ url: p.url, method: 'PUT', headers: p.headers, expires_at: p.expiresAt });

export const presentFile = (f: FileRecord, upload?: Presigned) => ({
  id: f.id,
  name: f.name,
  content_type: f.content_type,
  size: f.size,
  status: f.status === 'pending' ? 'pending' : 'uploaded',
  upload: upload ? presentUpload(upload) : null,
  created_at: f.created_at,
});

/**
 * Records the file and answers the presigned PUT that storage takes only with
 * this size and content type. A retry of an interrupted idempotent request
 * finds the file its first attempt recorded (the id is derived from the
 * request's hold) and answers it again.
 */
export async function createFile(who: Principal, input: NewFile, idempotency?: Hold) {
  const limit = maxFileBytes();
  if (input.size > limit) throw invalid(`size must be at most ${limit} bytes (MAX_FILE_BYTES)`, 'size');
  if (!contentTypeAllowed(input.content_type)) {
    throw invalid(`content_type ${input.content_type} is not one this service accepts (FILE_CONTENT_TYPES)`, 'content_type');
  }
  const now = idempotency?.createdMs ?? Date.now();
  const id = idempotency ? derivedId('file', now, idempotency.generation) : newId('file', now);
  const earlier = idempotency?.resumed ? await getFile(who.accountId, id) : undefined;
  const file: FileRecord = earlier ?? {
    id,
    account_id: who.accountId,
    contact_id: who.contactId,
    name: input.name,
    content_type: input.content_type,
    size: input.size,
    status: 'pending',
    created_at: Math.floor(now / 1000),
    attached_at: null,
    ref_count: 0,
  };
  if (!earlier) await putFile(file, now);
  return presentFile(
    file,
    await uploadUrl(objectKey(file.account_id, file.id), file.content_type, file.size, URL_SECONDS, new Date(file.created_at * 1000)),
  );
}

/** The caller's own file, `uploaded` once its object is in storage (looked for while the record says `pending`). */
export async function findOwnFile(who: Principal, id: string): Promise<FileRecord | undefined> {
  if (!looksLikeId('file', id)) return undefined;
  const file = await getFile(who.accountId, id);
  if (!file || file.contact_id !== who.contactId || file.status === 'deleting') return undefined;
  if (file.status === 'pending' && (await objectSize(objectKey(file.account_id, file.id))) === file.size) {
    await markUploaded(file);
    return { ...file, status: 'uploaded' };
  }
  return file;
}

export async function showFile(who: Principal, id: string) {
  const file = await findOwnFile(who, id);
  if (!file) throw notFound('file', id, 'id');
  return presentFile(file);
}
