import * as v from 'valibot';
import { conversationIdFor, otherInThread } from '#shared/data/conversations';
import { conversationMessageBatch, filesOfMessages } from '#shared/data/messages';
import type { Owner } from '#shared/db/keys';
import { releaseUnread } from '#shared/files/release';
import type { JobKind } from '#shared/jobs/kind';
import { BATCH, deleteAll, SETTLE_MS } from '#shared/purge/batches';

const payload = /* @__PURE__ */ (() => v.object({ contactId: v.string(), conversationId: v.string() }))();

/**
 * A one-to-one thread whose other participant has no conversation with the
 * owner any more is read by no one once the owner's entries go: the files
 * its messages attach are let go with them. (A group's thread stays: the
 * group may still be read, and its members may come back.)
 */
async function releaseIfUnread(owner: Owner, messages: { id: string; thread: string }[]): Promise<void> {
  for (const [thread, inThread] of Map.groupBy(messages, (m) => m.thread)) {
    const other = otherInThread(thread, owner.contactId);
    if (other === undefined || (await conversationIdFor({ accountId: owner.accountId, contactId: other }, owner.contactId))) continue;
    const files = await filesOfMessages(
      owner.accountId,
      thread,
      inThread.map((m) => m.id),
    );
    await releaseUnread(owner.accountId, files);
  }
}

/** A deleted conversation's messages: its owner's entries and locators, and the files of a thread no one reads any more. */
export const purgeConversation: JobKind<v.InferOutput<typeof payload>> = {
  name: 'purge-conversation',
  payload,
  subject: (p) => `CONV#${p.conversationId}`,
  settleMs: SETTLE_MS,
  async step(job) {
    const owner = { accountId: job.accountId, contactId: job.payload.contactId };
    const batch = await conversationMessageBatch(owner, job.payload.conversationId, BATCH);
    // Files first: a step that dies after this runs it again over the same entries, which are still there.
    await releaseIfUnread(owner, batch.messages);
    return { done: !(await deleteAll(batch.keys)) };
  },
};
