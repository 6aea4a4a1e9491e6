import * as z from 'zod';
import type { Attachment } from '#shared/data/messages';
import { badRequest } from '#shared/http/errors';
import { integerField } from '#shared/http/fields';
import { elementBytes } from '#shared/messaging/size';
import { newId } from '#shared/util/ids';

export const MAX_ATTACHMENTS = 10;

const httpsUrl = z
  .string()
  .max(2048, 'is too long')
  .refine((value) => URL.canParse(value) && new URL(value).protocol === 'https:', { error: 'must be an https URL' })
  .transform((value) => new URL(value).href);

export const attachmentInput = z.strictObject({
  type: z.enum(['image', 'video', 'audio', 'file'], { error: 'must be one of image, video, audio, file' }),
  url: httpsUrl,
  name: z.string().min(1).max(255).optional(),
  mime_type: z
    .string()
    .regex(/^[\w.+-]+\/[\w.+-]+$/, 'must be a media type such as image/png')
    .max(255)
    .optional(),
  size: integerField(0, Number.MAX_SAFE_INTEGER).optional(),
});

/** An array (JSON or `attachments[0][url]=`), or an empty value meaning "none". */
export const attachmentsInput = z.union([z.literal(''), z.null(), z.array(attachmentInput).max(MAX_ATTACHMENTS)]);
export type AttachmentsInput = z.infer<typeof attachmentsInput>;

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
    throw badRequest(`A message can have at most ${MAX_ATTACHMENTS} attachments`, 'attachments');
  }
  return { clear: false, append, bytesDelta: attachmentsBytes(append) };
}
