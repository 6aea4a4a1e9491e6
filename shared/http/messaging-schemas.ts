import * as z from 'zod';
import { MAX_ATTACHMENTS } from '#shared/messaging/attachments';
import { reactionsInput } from '#shared/messaging/reactions';
import { booleanField, cursorQuery, emptyMeansNull, idField, integerField, timestampField } from '#shared/http/fields';

const httpsUrl = z
  .string()
  .max(2048, 'is too long')
  .refine((value) => URL.canParse(value) && new URL(value).protocol === 'https:', { error: 'must be an https URL' })
  .transform((value) => new URL(value).href);

const attachmentInput = z.strictObject({
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

/** Edge schemas: strict, so an unknown or misspelt parameter is a 400 naming it. */
export const listConversationsQuery = z.strictObject({
  ...cursorQuery,
  muted: booleanField.optional(),
  archived: booleanField.optional(),
  pinned: booleanField.optional(),
  group_id: idField.optional(),
});

export const createConversationBody = z.strictObject({
  contact_id: idField.optional(),
  group_id: idField.optional(),
});

export const updateConversationBody = z.strictObject({
  pinned_message_id: emptyMeansNull(idField).optional(),
  is_pinned: booleanField.optional(),
  is_muted: booleanField.optional(),
  archived_at: emptyMeansNull(timestampField).optional(),
  opened: booleanField.optional(),
});

export const MAX_MESSAGE_LENGTH = 4096;
const messageText = z
  .string({ error: 'must be a string' })
  .refine((s) => s.trim().length > 0, { error: 'must not be empty' })
  .refine((s) => [...s].length <= MAX_MESSAGE_LENGTH, { error: `must be at most ${MAX_MESSAGE_LENGTH} characters` });

export const listMessagesQuery = z.strictObject({ ...cursorQuery, conversation_id: idField.optional() });

export const createMessageBody = z.strictObject({
  conversation_id: idField,
  message: messageText,
  attachments: attachmentsInput.optional(),
});

export const updateMessageBody = z.strictObject({
  message: messageText.optional(),
  reactions: reactionsInput.optional(),
  attachments: attachmentsInput.optional(),
  read: booleanField.optional(),
});
