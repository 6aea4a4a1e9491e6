import * as z from 'zod/mini';
import { MAX_ATTACHMENTS } from '#shared/messaging/attachments';
import { reactionsInput } from '#shared/messaging/reactions';
import { booleanField, cursorQuery, emptyMeansNull, idField, integerField, timestampField } from '#shared/http/fields';

// Schemas are built in /* @__PURE__ */ calls so that esbuild drops those a handler never uses (docs/performance.md).

const httpsUrl = /* @__PURE__ */ (() =>
  z.pipe(
    z.string().check(
      z.maxLength(2048, 'is too long'),
      z.refine((value) => URL.canParse(value) && new URL(value).protocol === 'https:', { error: 'must be an https URL' }),
    ),
    z.transform((value) => new URL(value).href),
  ))();

// zod/mini has no English locale: a check without its own message would read "Invalid input".
// These are the words classic zod used for them.
const attachmentInput = /* @__PURE__ */ (() =>
  z.strictObject({
    type: z.enum(['image', 'video', 'audio', 'file'], { error: 'must be one of image, video, audio, file' }),
    url: httpsUrl,
    name: z.optional(
      z
        .string()
        .check(
          z.minLength(1, 'Too small: expected string to have >=1 characters'),
          z.maxLength(255, 'Too big: expected string to have <=255 characters'),
        ),
    ),
    mime_type: z.optional(
      z
        .string()
        .check(
          z.regex(/^[\w.+-]+\/[\w.+-]+$/, 'must be a media type such as image/png'),
          z.maxLength(255, 'Too big: expected string to have <=255 characters'),
        ),
    ),
    size: z.optional(integerField(0, Number.MAX_SAFE_INTEGER)),
  }))();

/** An array (JSON or `attachments[0][url]=`), or an empty value meaning "none". */
export const attachmentsInput = /* @__PURE__ */ (() =>
  z.union([
    z.literal(''),
    z.null(),
    // Too many items fails the whole union ("must be empty, got an array"): this check's own message is never shown.
    z.array(attachmentInput).check(z.maxLength(MAX_ATTACHMENTS)),
  ]))();

/** Edge schemas: strict, so an unknown or misspelt parameter is a 400 naming it. */
export const listConversationsQuery = /* @__PURE__ */ (() =>
  z.strictObject({
    ...cursorQuery,
    muted: z.optional(booleanField),
    archived: z.optional(booleanField),
    pinned: z.optional(booleanField),
    group_id: z.optional(idField),
  }))();

export const createConversationBody = /* @__PURE__ */ (() =>
  z.strictObject({
    contact_id: z.optional(idField),
    group_id: z.optional(idField),
  }))();

export const updateConversationBody = /* @__PURE__ */ (() =>
  z.strictObject({
    pinned_message_id: z.optional(emptyMeansNull(idField)),
    is_pinned: z.optional(booleanField),
    is_muted: z.optional(booleanField),
    archived_at: z.optional(emptyMeansNull(timestampField)),
    opened: z.optional(booleanField),
  }))();

export const MAX_MESSAGE_LENGTH = 4096;
const messageText = /* @__PURE__ */ (() =>
  z.string({ error: 'must be a string' }).check(
    z.refine((s) => s.trim().length > 0, { error: 'must not be empty' }),
    z.refine((s) => [...s].length <= MAX_MESSAGE_LENGTH, { error: `must be at most ${MAX_MESSAGE_LENGTH} characters` }),
  ))();

export const listMessagesQuery = /* @__PURE__ */ (() => z.strictObject({ ...cursorQuery, conversation_id: z.optional(idField) }))();

export const createMessageBody = /* @__PURE__ */ (() =>
  z.strictObject({
    conversation_id: idField,
    message: messageText,
    attachments: z.optional(attachmentsInput),
  }))();

export const updateMessageBody = /* @__PURE__ */ (() =>
  z.strictObject({
    message: z.optional(messageText),
    reactions: z.optional(reactionsInput),
    attachments: z.optional(attachmentsInput),
    read: z.optional(booleanField),
  }))();
