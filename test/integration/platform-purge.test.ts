import { describe, expect, it } from 'vitest';
import { getContact, tombstoneContact } from '#shared/data/contacts';
import { deleteGroup } from '#shared/data/groups';
import { groupMembers, groupsOf } from '#shared/data/group-members';
import { createToken, findCaller } from '#shared/data/tokens';
import { conversationIdsOf, putConversation } from '#shared/data/conversations';
import { jobPut, messageOf, newJob } from '#shared/jobs/run';
import { purgeContact } from '#shared/purge/contact';
import { purgeGroup } from '#shared/purge/group';
import { handler as purgeWorker } from '#functions/workers/purge';
import { aTenant } from '../steps/given.ts';
import { jobEvent, jobOf } from '../steps/jobs.ts';

/**
 * Deleting a contact or a group commits the delete and its purge job in
 * one transaction; what follows (tokens, memberships, own views, members) is
 * the job's. A process that dies right after the commit loses nothing: the
 * job the sweeper re-queues (or the queue redelivers) finishes the work.
 */
describe('contact and group deletion after a crash', () => {
  it('finishes a deleted contact whose follow-up never ran: tokens refused, out of its groups, its views gone', async () => {
    // Given bob with a token, in the tenant's group, with a conversation of his own
    const t = await aTenant();
    const bob = { accountId: t.accountId, contactId: t.contactIds.bob! };
    const { token } = await createToken(bob);
    await putConversation(bob, { contactId: t.userContactId });
    // When his delete commits and the process dies before the purge runs
    const job = newJob(purgeContact, t.accountId, { contactId: bob.contactId });
    expect(await tombstoneContact((await getContact(t.accountId, bob.contactId))!, [jobPut(job)])).toBe(true);
    expect(await getContact(t.accountId, bob.contactId)).toBeUndefined();
    expect(await jobOf(job)).toMatchObject({ kind: 'purge-contact', pending: true });
    // Then the job as the queue carries it, run by the worker, finishes the work
    expect(await purgeWorker(jobEvent(messageOf(job)))).toEqual({ batchItemFailures: [] });
    expect(await findCaller(token)).toBeUndefined();
    expect(await groupsOf(t.accountId, bob.contactId, 10)).toEqual([]);
    expect(await groupMembers(t.accountId, t.groupId)).not.toContain(bob.contactId);
    expect(await conversationIdsOf(bob, 10)).toEqual([]);
    // And a second delivery of the same job finds nothing more to do
    expect(await purgeWorker(jobEvent(messageOf(job)))).toEqual({ batchItemFailures: [] });
    expect(await groupMembers(t.accountId, t.groupId)).toHaveLength(2);
  });

  it("finishes a deleted group's members after a crash", async () => {
    const t = await aTenant();
    const job = newJob(purgeGroup, t.accountId, { groupId: t.groupId });
    expect(await deleteGroup(t.accountId, t.groupId, [jobPut(job)])).toBe(true);
    expect(await groupMembers(t.accountId, t.groupId)).toHaveLength(3);
    expect(await purgeWorker(jobEvent(messageOf(job)))).toEqual({ batchItemFailures: [] });
    expect(await groupMembers(t.accountId, t.groupId)).toEqual([]);
    expect(await groupsOf(t.accountId, t.userContactId, 10)).toEqual([]);
  });
});
