import * as v from 'valibot';
import { MAX_ATTACHMENTS } from '#shared/messaging/attachments';
import { reactionsInput } from '#shared/messaging/reactions';
import {
  booleanField,
  CONTROL_CHARACTER,
  cursorQuery,
  emptyMeansNull,
  idField,
  integerField,
  nameField,
  timestampField,
} from '#shared/http/fields';
import { nested } from '#shared/util/object-schema';

// Schemas are built in /* @__PURE__ */ calls so that esbuild drops those a handler never uses (docs/performance.md).

export const httpsUrl = /* @__PURE__ */ (() =>
  v.pipe(
    v.string(),
    v.maxLength(2048, 'must be at most 2048 characters'),
    v.check((value) => URL.canParse(value) && new URL(value).protocol === 'https:', 'must be an https URL'),
    v.transform((value) => new URL(value).href),
  ))();

const attachmentType = /* @__PURE__ */ (() =>
  v.picklist(['image', 'video', 'audio', 'file'], 'must be one of image, video, audio, file'))();

/** An uploaded file (POST /v1/files): name, content type and size come from it, and `type` from its content type (a `type` given is refused as unknown). */
const fileAttachmentInput = /* @__PURE__ */ (() => v.strictObject({ file_id: idField }))();

// The optional fields take null and "" as not given (as the API shows them, and as a JSON body unsets a field).
const linkAttachmentInput = /* @__PURE__ */ (() =>
  nested(
    v.strictObject({
      type: attachmentType,
      url: httpsUrl,
      name: v.optional(
        emptyMeansNull(
          v.pipe(
            v.string(),
            v.maxLength(255, 'must be at most 255 characters'),
            // As every other name (nameField): a name is shown, and a line break or NUL in it is no one's file name.
            v.check((s) => !CONTROL_CHARACTER.test(s), 'must not contain control characters'),
          ),
        ),
      ),
      mime_type: v.optional(
        emptyMeansNull(
          v.pipe(
            v.string(),
            v.maxLength(255, 'must be at most 255 characters'),
            v.regex(/^[\w.+-]+\/[\w.+-]+$/, 'must be a media type such as image/png'),
          ),
        ),
      ),
      size: v.optional(emptyMeansNull(integerField(0, Number.MAX_SAFE_INTEGER))),
    }),
  ))();

/** Chosen by whether it names a file, so a wrong field is reported against the form the client meant. */
const attachmentInput = /* @__PURE__ */ (() =>
  v.lazy((input) =>
    typeof input === 'object' && input !== null && 'file_id' in input ? nested(fileAttachmentInput) : linkAttachmentInput,
  ))();

/** An array (JSON or `attachments[0][url]=`), or an empty value meaning "none". */
export const attachmentsInput = /* @__PURE__ */ (() =>
  v.union([
    v.literal(''),
    v.null(),
    v.pipe(v.array(attachmentInput), v.maxLength(MAX_ATTACHMENTS, `must contain at most ${MAX_ATTACHMENTS} attachments`)),
  ]))();

/** Edge schemas: strict, so an unknown or misspelt parameter is a 400 naming it. */
export const listConversationsQuery = /* @__PURE__ */ (() =>
  v.strictObject({
    ...cursorQuery,
    muted: v.optional(booleanField),
    archived: v.optional(booleanField),
    pinned: v.optional(booleanField),
    group_id: v.optional(idField),
  }))();

export const createConversationBody = /* @__PURE__ */ (() =>
  v.strictObject({
    contact_id: v.optional(idField),
    group_id: v.optional(idField),
  }))();

export const updateConversationBody = /* @__PURE__ */ (() =>
  v.strictObject({
    pinned_message_id: v.optional(emptyMeansNull(idField)),
    is_pinned: v.optional(booleanField),
    is_muted: v.optional(booleanField),
    archived_at: v.optional(emptyMeansNull(timestampField)),
    opened: v.optional(booleanField),
  }))();

export const MAX_MESSAGE_LENGTH = 4096;
const messageText = /* @__PURE__ */ (() =>
  v.pipe(
    v.string('must be a string'),
    v.check((s) => s.trim().length > 0, 'must not be empty'),
    v.check((s) => [...s].length <= MAX_MESSAGE_LENGTH, `must be at most ${MAX_MESSAGE_LENGTH} characters`),
  ))();

export const listMessagesQuery = /* @__PURE__ */ (() => v.strictObject({ ...cursorQuery, conversation_id: v.optional(idField) }))();

export const createMessageBody = /* @__PURE__ */ (() =>
  v.strictObject({
    conversation_id: idField,
    message: messageText,
    attachments: v.optional(attachmentsInput),
  }))();

export const updateMessageBody = /* @__PURE__ */ (() =>
  v.strictObject({
    message: v.optional(messageText),
    reactions: v.optional(reactionsInput),
    attachments: v.optional(attachmentsInput),
    read: v.optional(booleanField),
  }))();

/** POST /v1/files: what the upload will be; storage takes only a PUT of exactly this size and content type. */
export const createFileBody = /* @__PURE__ */ (() =>
  v.strictObject({
    name: nameField(255),
    content_type: v.pipe(
      v.string(),
      v.maxLength(255, 'must be at most 255 characters'),
      v.regex(/^[\w.+-]+\/[\w.+-]+$/, 'must be a media type such as image/png'),
    ),
    size: integerField(1, Number.MAX_SAFE_INTEGER),
  }))();
