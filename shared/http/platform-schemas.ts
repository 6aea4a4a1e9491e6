import * as v from 'valibot';
import { MAX_GROUP_MEMBERS } from '#shared/data/group-members';
import { MAX_TOKEN_SECONDS } from '#shared/data/tokens';
import { cursorQuery, emptyMeansNull, idField, integerField, nameField } from '#shared/http/fields';
import { httpsUrl } from '#shared/http/messaging-schemas';

// Schemas are built in /* @__PURE__ */ calls so that esbuild drops those a handler never uses (docs/performance.md).

const username = /* @__PURE__ */ (() => nameField(64, 'refused'))();

/** E.164: a plus, a country code not starting with 0, at most 15 digits in all. */
const phoneNumber = /* @__PURE__ */ (() =>
  v.pipe(
    v.string('must be a string'),
    v.maxLength(16, 'must be an E.164 number such as +14155550100'),
    v.regex(/^\+[1-9]\d{1,14}$/, 'must be an E.164 number such as +14155550100'),
  ))();

const name = /* @__PURE__ */ (() => nameField(255))();

const webhookUrl = /* @__PURE__ */ (() =>
  v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'), v.maxLength(2048, 'is too long')))();

const eventTypes = /* @__PURE__ */ (() =>
  v.pipe(
    v.array(v.pipe(v.string('must be an event type'), v.maxLength(64, 'must be an event type')), 'must be an array of event types'),
    v.minLength(1, 'must name at least one event type (or "*")'),
    v.maxLength(32, 'must name at most 32 event types'),
  ))();

export const listQuery = /* @__PURE__ */ (() => v.strictObject(cursorQuery))();

export const createContactBody = /* @__PURE__ */ (() =>
  v.strictObject({ username, phone_number: v.optional(emptyMeansNull(phoneNumber)), avatar_url: v.optional(emptyMeansNull(httpsUrl)) }))();

export const updateContactBody = /* @__PURE__ */ (() =>
  v.strictObject({
    username: v.optional(username),
    phone_number: v.optional(emptyMeansNull(phoneNumber)),
    avatar_url: v.optional(emptyMeansNull(httpsUrl)),
  }))();

export const createTokenBody = /* @__PURE__ */ (() => v.strictObject({ expires_in: v.optional(integerField(60, MAX_TOKEN_SECONDS)) }))();

export const createGroupBody = /* @__PURE__ */ (() =>
  v.strictObject({
    name,
    members: v.optional(
      v.pipe(
        v.array(idField, 'must be an array of contact ids'),
        v.maxLength(MAX_GROUP_MEMBERS, `must contain at most ${MAX_GROUP_MEMBERS} contact ids`),
      ),
    ),
  }))();

export const updateGroupBody = /* @__PURE__ */ (() => v.strictObject({ name: v.optional(name) }))();

export const addMemberBody = /* @__PURE__ */ (() => v.strictObject({ contact_id: idField }))();

export const createWebhookBody = /* @__PURE__ */ (() => v.strictObject({ url: webhookUrl, enabled_events: v.optional(eventTypes) }))();

export const updateWebhookBody = /* @__PURE__ */ (() =>
  v.strictObject({ url: v.optional(webhookUrl), enabled_events: v.optional(eventTypes) }))();

/** GET /v1/events: `after` is an event id (checked against the feed by the domain), `limit` 1 to 100. */
export const eventsQuery = /* @__PURE__ */ (() =>
  v.strictObject({
    after: v.optional(v.pipe(v.string('must be an event id'), v.maxLength(64, 'must be an event id'))),
    limit: v.optional(integerField(1, 100)),
  }))();
