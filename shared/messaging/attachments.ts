import type { Attachment } from '#shared/data/message-items';
import { invalid } from '#shared/errors';
import { elementBytes } from '#shared/messaging/size';
import { newId } from '#shared/util/ids';

export const MAX_ATTACHMENTS = 10;

/** An attachment as a request gives it (checked by the request schema). */
export interface AttachmentInput {
  type: Attachment['type'];
  url: string;
  name?: string;
  mime_type?: string;
  size?: number;
}

/** A list of attachments, or an empty value meaning "none". */
export type AttachmentsInput = '' | null | AttachmentInput[];

export const toAttachments = (input: AttachmentsInput | undefined): Attachment[] =>
  (input || []).map((a) => ({
    id: newId('att'),
    type: a.type,
    url: a.url,
    name: a.name ?? null,
    mime_type: a.mime_type ?? null,
    size: a.size ?? null,
  }));

export const attachmentsBytes = (list: Attachment[]) => list.reduce((n, a) => n + elementBytes(a), 0);

export interface AttachmentsPlan {
  clear: boolean;
  append: Attachment[];
  bytesDelta: number;
}

/** PUT appends; an empty value removes all. The count cap is checked here and again by the write's condition. */
export function planAttachments(current: Attachment[], input: AttachmentsInput): AttachmentsPlan {
  if (input === '' || input === null) return { clear: current.length > 0, append: [], bytesDelta: -attachmentsBytes(current) };
  const append = toAttachments(input);
  if (current.length + append.length > MAX_ATTACHMENTS) {
    throw invalid(`A message can have at most ${MAX_ATTACHMENTS} attachments`, 'attachments');
  }
  return { clear: false, append, bytesDelta: attachmentsBytes(append) };
}
