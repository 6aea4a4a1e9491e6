import type { Attachment } from '#shared/data/message-items';
import type { FileRecord } from '#shared/data/files';
import { invalid } from '#shared/errors';
import { elementBytes } from '#shared/messaging/size';
import { newId } from '#shared/util/ids';

export const MAX_ATTACHMENTS = 10;

/** An attachment as a request gives it (checked by the request schema): an external link, or an uploaded file. */
export type AttachmentInput =
  | { type: Attachment['type']; url: string; name?: string | null; mime_type?: string | null; size?: number | null; file_id?: undefined }
  | { file_id: string; type?: Attachment['type']; url?: undefined };

/** A list of attachments, or an empty value meaning "none". */
export type AttachmentsInput = '' | null | AttachmentInput[];

/** An uploaded file's attachment `type`, from its content type. */
const typeOf = (contentType: string): Attachment['type'] => {
  const family = contentType.split('/')[0]!.toLowerCase();
  return family === 'image' || family === 'video' || family === 'audio' ? family : 'file';
};

/** The uploaded files a request names, by the attachment's place (undefined for an external link). */
export const fileIdsOf = (input: AttachmentsInput | undefined) => (input || []).map((a) => a.file_id);

/** `files`: the request's uploaded files, checked (shared/files/attach.ts); name, content type and size come from them. */
export const toAttachments = (input: AttachmentsInput | undefined, files: ReadonlyMap<string, FileRecord> = new Map()): Attachment[] =>
  (input || []).map((a) => {
    if (a.file_id === undefined) {
      return { id: newId('att'), type: a.type, url: a.url, name: a.name ?? null, mime_type: a.mime_type ?? null, size: a.size ?? null };
    }
    const file = files.get(a.file_id)!;
    return {
      id: newId('att'),
      type: typeOf(file.content_type),
      url: null,
      name: file.name,
      mime_type: file.content_type,
      size: file.size,
      file_id: file.id,
    };
  });

/** A download URL as a response carries it, counted in place of the stored null (the size bound holds for what is sent). */
const SIGNED_URL = 'u'.repeat(1_024);

export const attachmentsBytes = (list: Attachment[]) =>
  list.reduce((n, a) => n + elementBytes(a.file_id === undefined ? a : { ...a, url: SIGNED_URL }), 0);

export interface AttachmentsPlan {
  clear: boolean;
  append: Attachment[];
  bytesDelta: number;
}

/** PUT appends; an empty value removes all. The count cap is checked here and again by the write's condition. */
export function planAttachments(current: Attachment[], input: AttachmentsInput, files?: ReadonlyMap<string, FileRecord>): AttachmentsPlan {
  if (input === '' || input === null) return { clear: current.length > 0, append: [], bytesDelta: -attachmentsBytes(current) };
  const append = toAttachments(input, files);
  if (current.length + append.length > MAX_ATTACHMENTS) {
    throw invalid(`A message can have at most ${MAX_ATTACHMENTS} attachments`, 'attachments');
  }
  return { clear: false, append, bytesDelta: attachmentsBytes(append) };
}
