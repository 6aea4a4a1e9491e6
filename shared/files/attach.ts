import type { FileRecord } from '#shared/data/files';
import { invalid, notFound } from '#shared/errors';
import { findOwnFile, objectKey } from '#shared/files/files';
import { tagAttached } from '#shared/files/storage';

/**
 * The files a request attaches, by the attachment's place in it: each must
 * be the caller's own (else 404, as for an id that never existed) and
 * uploaded (else 400). A file attached for the first time is tagged so
 * before the message's transaction: a tag on a file whose message then
 * failed only delays its deletion to the sweeper's pass.
 */
export async function filesToAttach(
  who: { accountId: string; contactId: string },
  fileIds: (string | undefined)[],
): Promise<Map<string, FileRecord>> {
  const found = new Map<string, FileRecord>();
  await Promise.all(
    fileIds.map(async (id, i) => {
      if (id === undefined || found.has(id)) return;
      const param = `attachments[${i}][file_id]`;
      const file = await findOwnFile(who, id);
      if (!file) throw notFound('file', id, param);
      if (file.status !== 'uploaded')
        throw invalid(`File ${id} has not been uploaded yet: PUT its bytes to its upload URL first`, param, 'file_not_uploaded');
      found.set(id, file);
    }),
  );
  await Promise.all([...found.values()].filter((f) => f.attached_at === null).map((f) => tagAttached(objectKey(f.account_id, f.id))));
  return found;
}
