import * as v from 'valibot';
import { conversationIdsOf, removeConversation } from '#shared/data/conversations';
import { groupsOf, removeMember } from '#shared/data/group-members';
import { contactTokenKeys } from '#shared/data/tokens';
import { keys } from '#shared/db/keys';
import type { JobKind } from '#shared/jobs/kind';
import { jobPut, newJob, startJob } from '#shared/jobs/run';
import { BATCH, deleteAll, SETTLE_MS } from '#shared/purge/batches';
import { purgeConversation } from '#shared/purge/conversation';

/** Groups left (and conversations removed) per step: each is a transaction of its own. */
const AT_ONCE = 10;

// Built in a /* @__PURE__ */ call, as the other schemas (shared/db/item-schema.ts).
const contactPayload = /* @__PURE__ */ (() => v.object({ contactId: v.string() }))();

/**
 * What a deleted contact leaves: its tokens first (they stop working, and
 * its realtime connections close at their next event), then its place in
 * each group, then its own conversations, each purged as a deleted one.
 * Others keep what it sent.
 */
export const purgeContact: JobKind<v.InferOutput<typeof contactPayload>> = {
  name: 'purge-contact',
  payload: contactPayload,
  subject: (p) => `CONTACT#${p.contactId}`,
  settleMs: SETTLE_MS,
  async step(job, deadline) {
    const who = { accountId: job.accountId, contactId: job.payload.contactId };
    if (await deleteAll(await contactTokenKeys(who, BATCH))) return { done: false };
    const groups = await groupsOf(who.accountId, who.contactId, AT_ONCE);
    if (groups.length > 0) {
      // removeMember is false for a group deleted meanwhile: its own purge takes the member item then.
      await Promise.all(groups.map((groupId) => removeMember(who.accountId, groupId, who.contactId)));
      await deleteAll(groups.map((grp) => keys.groupMember.key({ acct: who.accountId, grp, ct: who.contactId })));
      return { done: false };
    }
    const conversations = await conversationIdsOf(who, AT_ONCE);
    for (const conversationId of conversations) {
      const purge = newJob(purgeConversation, who.accountId, { contactId: who.contactId, conversationId });
      if (await removeConversation(who, conversationId, [jobPut(purge)])) await startJob(purgeConversation, purge, deadline);
    }
    return { done: conversations.length === 0 };
  },
};
