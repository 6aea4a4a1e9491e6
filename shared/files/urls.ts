import { objectKey } from '#shared/files/files';
import { URL_SECONDS } from '#shared/files/settings';
import { downloadUrl } from '#shared/files/storage';
import { isRecord } from '#shared/util/object-schema';

/**
 * Download URLs of uploaded files, made for each reader as a message leaves
 * the service (a response, a realtime frame, a webhook): stored messages and
 * stored events hold `url: null`, so no URL outlives the hour it was made
 * for, and none is ever stored where a later reader would get it.
 */

interface ShownAttachment {
  url: string | null;
  name: string | null;
  /** Null (or absent, in events stored before files) for an external link. */
  file_id?: string | null;
}

const signed = async (accountId: string, a: ShownAttachment): Promise<ShownAttachment> =>
  typeof a.file_id !== 'string' ? a : { ...a, url: await downloadUrl(objectKey(accountId, a.file_id), a.name ?? a.file_id, URL_SECONDS) };

const hasFiles = (attachments: ShownAttachment[]) => attachments.some((a) => typeof a.file_id === 'string');

/** Messages as presented, their uploaded files' `url` filled in. */
export async function withFileUrls<M extends { attachments: ShownAttachment[] }>(accountId: string, messages: M[]): Promise<M[]> {
  return Promise.all(
    messages.map(async (m) =>
      hasFiles(m.attachments) ? { ...m, attachments: await Promise.all(m.attachments.map((a) => signed(accountId, a))) } : m,
    ),
  );
}

/** An event as it leaves: a message event's object gets its files' URLs; any other is as stored. */
export async function eventWithFileUrls<E extends object>(accountId: string, event: E): Promise<E> {
  const data = (event as { data?: unknown }).data;
  const object = isRecord(data) ? data.object : undefined;
  if (!isRecord(object) || !Array.isArray(object.attachments) || !hasFiles(object.attachments as ShownAttachment[])) return event;
  const [message] = await withFileUrls(accountId, [object as { attachments: ShownAttachment[] }]);
  return { ...event, data: { ...(data as object), object: message } };
}
