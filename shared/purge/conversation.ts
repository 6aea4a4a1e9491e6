import * as v from 'valibot';
import { conversationMessageKeys } from '#shared/data/messages';
import { BATCH, batchPurge } from '#shared/purge/batches';

/** A deleted conversation's messages: its owner's entries and locators. */
export const purgeConversation = /* @__PURE__ */ batchPurge(
  'purge-conversation',
  v.object({ contactId: v.string(), conversationId: v.string() }),
  (p) => `CONV#${p.conversationId}`,
  (accountId, p) => conversationMessageKeys({ accountId, contactId: p.contactId }, p.conversationId, BATCH),
);
