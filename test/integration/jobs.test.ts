import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { handler as sweeper } from '#functions/workers/sweeper';
import { handler as purgeWorker } from '#functions/workers/purge';
import { getContact } from '#shared/data/contacts';
import { conversationIdsOf, putConversation } from '#shared/data/conversations';
import { createEmailList } from '#shared/data/email-lists';
import { storeEmails } from '#shared/data/email-adds';
import { listEmailKeys } from '#shared/data/email-deletes';
import { getGroup } from '#shared/data/groups';
import { groupMembers, groupsOf } from '#shared/data/group-members';
import { claimJob, dueJobs, LEASE_MS } from '#shared/data/jobs';
import { conversationMessageBatch } from '#shared/data/messages';
import { createToken, findCaller } from '#shared/data/tokens';
import { transactWrite } from '#shared/db/batch';
import { deleteList } from '#shared/email/list-delete';
import { jobPut, messageOf, newJob } from '#shared/jobs/run';
import { deleteConversation, openConversation } from '#shared/messaging/conversations';
import { messageSubject } from '#shared/messaging/fanout';
import { deleteMessage, sendMessage } from '#shared/messaging/messages';
import { deleteContact } from '#shared/platform/contacts';
import { deleteGroup } from '#shared/platform/groups';
import { SETTLE_MS } from '#shared/purge/batches';
import { purgeList } from '#shared/purge/list';
import { startWorkers } from '../../scripts/local/runtime.ts';
import { eventually } from '../steps/eventually.ts';
import { aTenant, conversationWithMessages, groupMembersOf, type Tenant } from '../steps/given.ts';
import { holdings } from '../steps/holdings.ts';
import { jobEvent, jobOf, timePasses } from '../steps/jobs.ts';

/**
 * Every kind of durable job, killed between its commit and its follow-up:
 * the request commits the change with the job's record, and its process
 * dies before the job starts (here: `startJob` does nothing while
 * `died.afterCommit` is set; the worker and the sweeper run the real one).
 * After the restart, the lease of the dead chain runs out, the sweeper
 * queues the job, the worker finishes it, and nothing is done twice.
 */
const died = vi.hoisted(() => ({ afterCommit: false }));
vi.mock('#shared/jobs/run', async (importOriginal) => {
  const real = await importOriginal<typeof import('#shared/jobs/run')>();
  return {
    ...real,
    startJob: (...args: Parameters<typeof real.startJob>) => (died.afterCommit ? Promise.resolve() : real.startJob(...args)),
  };
});

async function crashingAfterCommit<T>(request: () => Promise<T>): Promise<T> {
  died.afterCommit = true;
  try {
    return await request();
  } finally {
    died.afterCommit = false;
  }
}

type Ref = { accountId: string; subject: string };

/** The restart: the dead chain's lease (and a purge's settle time) runs out, and the sweeper's next pass comes. */
async function restart(ref: Ref) {
  expect(await jobOf(ref)).toMatchObject({ pending: true });
  await timePasses(ref, LEASE_MS + SETTLE_MS + 1000);
  expect((await sweeper()).jobs).toBeGreaterThanOrEqual(1);
}

/** The sentinel that the worker is through: a finished job leaves the pending index (most leave the table). */
const finished = (ref: Ref) => eventually(async () => !(await jobOf(ref))?.pending, { what: `job ${ref.subject} finished` });

const aliceOf = (t: Tenant) => ({ accountId: t.accountId, contactId: t.userContactId });

let workers: ReturnType<typeof startWorkers>;
beforeAll(() => {
  workers = startWorkers(process.env as Record<string, string>, { waitSeconds: 1 });
});
afterAll(() => workers.stop());

describe('a job whose process died between the commit and the follow-up is finished once, by the sweeper and the queue', () => {
  it('fanout: a group message reaches every member once', async () => {
    // Given a group of 53 (three steps of delivery)
    const t = await aTenant();
    const others = await groupMembersOf(t, 50, { tokens: false });
    const recipients = [t.contactIds.bob!, t.contactIds.carol!, ...others.map((m) => m.contactId)];
    const { conversation } = await openConversation(aliceOf(t), { group_id: t.groupId });
    // When alice's send commits and its process dies
    const sent = await crashingAfterCommit(() => sendMessage(aliceOf(t), { conversation_id: conversation.id, message: 'all hands' }));
    const job = { accountId: t.accountId, subject: messageSubject(sent.id) };
    expect((await holdings(t, recipients, sent.id)).entries).toBe(0);
    await restart(job);
    // Then every recipient holds it once, one unread each
    await finished(job);
    expect(await holdings(t, recipients, sent.id)).toEqual({ conversations: 52, entries: 52, unread: Array(52).fill(1) });
    // And the record stays, as the list a retraction must reach, off the sweeper's index
    expect(await jobOf(job)).toMatchObject({ kind: 'fanout', pending: false });
    expect((await dueJobs(Date.now() + 2 * LEASE_MS)).some((j) => j.subject === job.subject)).toBe(false);
  });

  it('retraction: a deleted group message leaves every member once', async () => {
    // Given a group message delivered to bob and carol
    const t = await aTenant();
    const recipients = [t.contactIds.bob!, t.contactIds.carol!];
    const { conversation } = await openConversation(aliceOf(t), { group_id: t.groupId });
    const sent = await sendMessage(aliceOf(t), { conversation_id: conversation.id, message: 'oops' });
    expect(await holdings(t, recipients, sent.id)).toEqual({ conversations: 2, entries: 2, unread: [1, 1] });
    // When alice's delete commits and its process dies
    await crashingAfterCommit(() => deleteMessage(aliceOf(t), sent.id));
    const job = { accountId: t.accountId, subject: messageSubject(sent.id) };
    expect(await jobOf(job)).toMatchObject({ kind: 'retraction' });
    expect((await holdings(t, recipients, sent.id)).entries).toBe(2);
    await restart(job);
    // Then it is gone from both, each unread count down by one, not two
    await finished(job);
    expect(await holdings(t, recipients, sent.id)).toEqual({ conversations: 2, entries: 0, unread: [0, 0] });
    expect(await jobOf(job)).toBeUndefined();
  });

  it("purge-conversation: a deleted conversation's messages are all deleted", async () => {
    const t = await aTenant();
    const conversationId = await conversationWithMessages(t, 150);
    await crashingAfterCommit(() => deleteConversation(aliceOf(t), conversationId, Date.now() + 10_000));
    const job = { accountId: t.accountId, subject: `CONV#${conversationId}` };
    expect((await conversationMessageBatch(aliceOf(t), conversationId, 500)).keys).toHaveLength(300);
    await restart(job);
    await finished(job);
    expect((await conversationMessageBatch(aliceOf(t), conversationId, 1)).keys).toEqual([]);
    expect(await jobOf(job)).toBeUndefined();
  });

  it("purge-list: a deleted list's emails are all deleted", async () => {
    const t = await aTenant();
    const list = await createEmailList(t.accountId, { name: 'crash' });
    await storeEmails(t.accountId, { kind: 'list', listId: list.id }, ['a@example.com', 'b@example.com', 'c@example.com'], 0);
    await crashingAfterCommit(() => deleteList(t, list.id, Date.now() + 10_000));
    const job = { accountId: t.accountId, subject: `LIST#${list.id}` };
    expect((await listEmailKeys(t.accountId, list.id, 100)).length).toBeGreaterThanOrEqual(3);
    await restart(job);
    await finished(job);
    expect(await listEmailKeys(t.accountId, list.id, 1)).toEqual([]);
    expect(await jobOf(job)).toBeUndefined();
  });

  it('purge-contact: tokens refused, out of its group once, its own conversations gone', async () => {
    // Given bob with a token, in the group of three, with a conversation of his own
    const t = await aTenant();
    const bob = { accountId: t.accountId, contactId: t.contactIds.bob! };
    const { token } = await createToken(bob);
    await putConversation(bob, { contactId: t.userContactId });
    // When his delete commits and its process dies
    await crashingAfterCommit(() => deleteContact(t, bob.contactId, Date.now() + 10_000));
    const job = { accountId: t.accountId, subject: `CONTACT#${bob.contactId}` };
    expect(await getContact(t.accountId, bob.contactId)).toBeUndefined();
    expect(await findCaller(token)).toBeDefined();
    await restart(job);
    // Then the purge finished what the delete left, and the group counts bob's leaving once
    await finished(job);
    expect(await findCaller(token)).toBeUndefined();
    expect(await groupsOf(t.accountId, bob.contactId, 10)).toEqual([]);
    expect(await groupMembers(t.accountId, t.groupId)).toHaveLength(2);
    expect((await getGroup(t.accountId, t.groupId, true))!.member_count).toBe(2);
    expect(await conversationIdsOf(bob, 10)).toEqual([]);
  });

  it("purge-group: a deleted group's members are all deleted", async () => {
    const t = await aTenant();
    await crashingAfterCommit(() => deleteGroup(t, t.groupId, Date.now() + 10_000));
    const job = { accountId: t.accountId, subject: `GROUP#${t.groupId}` };
    expect(await groupMembers(t.accountId, t.groupId)).toHaveLength(3);
    await restart(job);
    await finished(job);
    expect(await groupMembers(t.accountId, t.groupId)).toEqual([]);
    expect(await groupsOf(t.accountId, t.userContactId, 10)).toEqual([]);
    expect(await jobOf(job)).toBeUndefined();
  });
});

describe('job chains', () => {
  it('let one chain at a time work on a job, and the sweeper leaves a held job alone', async () => {
    // Given a purge on record, held by the chain that wrote it
    const t = await aTenant();
    const list = await createEmailList(t.accountId, { name: 'chains' });
    await storeEmails(t.accountId, { kind: 'list', listId: list.id }, ['held@example.com'], 0);
    const job = newJob(purgeList, t.accountId, { listId: list.id });
    await transactWrite({ TransactItems: [jobPut(job)] });
    // When a second chain's message comes (a duplicate, a sweeper re-queue)
    expect(await purgeWorker(jobEvent({ ...messageOf(job), chain: 'chain-b' }))).toEqual({ batchItemFailures: [] });
    // Then it finds the job taken and does nothing
    expect((await listEmailKeys(t.accountId, list.id, 10)).length).toBeGreaterThan(0);
    expect(await jobOf(job)).toMatchObject({ holder: job.chain });
    // And the sweeper does not queue it while the lease runs
    expect((await dueJobs(Date.now())).some((j) => j.subject === job.subject)).toBe(false);
    // While the holder itself carries on
    expect(await claimJob(job, job.chain)).toBeDefined();
  });
});
