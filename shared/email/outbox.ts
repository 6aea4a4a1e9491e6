import { namedParts, transactNamed, type NamedItems } from '#shared/db/batch';
import { creditBalance, debitCredits } from '#shared/data/accounts';
import { applyDeltas, deltaUpdates, releaseTokens, type Key, type PendingDeltas } from '#shared/data/collections';
import { listReleased } from '#shared/data/email-lists';
import { restoreEmails } from '#shared/data/email-restore';
import { emailReleased } from '#shared/data/email-status';
import { getEmails } from '#shared/data/emails';
import {
  awaitingOutboxes,
  allAwaitingOutboxes,
  deleteOutbox,
  deleteOutboxes,
  deltasDropped,
  dropOutboxDeltas,
  DUE_AFTER_MS,
  markQueued,
  queuedOutboxesDue,
  readyOutboxes,
  readyUpdate,
  type OutboxItem,
} from '#shared/data/outbox';
import { enqueueValidation, workOf, type Work } from '#shared/email/work';
import { describeError, logger } from '#shared/util/logger';

/**
 * The validation outbox's whole life cycle. Beside the change stream, it is
 * the one other mechanism that finishes work after a commit, for the email
 * write path only; docs/architecture.md says why that path keeps it.
 *
 * An outbox item is written in the transaction that stores a chunk of
 * emails. It names their validation work and, until applied, the counts
 * their collection still has to take in. Its state is the index partition
 * it sits in (shared/data/outbox.ts):
 *
 * - `awaiting`: held for lack of credits (`…#OUTBOX#AWAITING`);
 * - `ready`: committed, work not queued yet (`OUTBOX#READY#<shard>`);
 * - `queued`: work on the queue, looked at again once due (`OUTBOX#DUE#<shard>`);
 * - deleted: nothing of it is left to do.
 *
 * Transitions, each repeatable after a crash at any point:
 * - `settle`: counts applied; `ready` → `queued` (deleted when no work is
 *   left to queue). Made by the request right after its commit, else by the
 *   sweeper's `recoverLostWork` two minutes later. An `awaiting` one only loses its
 *   counts.
 * - `release` (`resumeAwaiting`): `awaiting` → `ready` → `queued` once the balance covers it,
 *   debiting in the same transaction; after credits are added, and by the
 *   sweeper.
 * - `recoverLostWork`: a `queued` one come due is deleted when its emails all
 *   finished, else their unfinished ones are queued again and it comes due
 *   later (a message lost after the queue: retention, a purge, a local restart).
 */
const pendingOf = (outbox: OutboxItem): PendingDeltas[] => (outbox.deltas ? [{ token: outbox.token, deltas: outbox.deltas }] : []);

/** What the worker needs of an outbox's emails, from the outbox itself when it carries their addresses. */
const outboxWork = (outbox: OutboxItem): Work[] =>
  outbox.email_ids.map((id, i): Work =>
    outbox.addresses && outbox.seqs && outbox.emails_created_at !== undefined
      ? {
          id,
          known: {
            address: outbox.addresses[i]!,
            seq: outbox.seqs[i]!,
            createdAt: outbox.emails_created_at,
            listId: outbox.list_id ?? null,
          },
        }
      : { id },
  );

/**
 * Settles outboxes of one collection, in an order that any crash can resume
 * from: apply their counts (exactly once, by token); then at once queue their
 * work and move them to `queued` (or delete them when there was none; an
 * `awaiting` one only drops its counts); then forget the tokens. Returns the
 * collection item after the counts, or 'gone' when it was deleted meanwhile.
 *
 * `onlyIds` limits the work queued (emails finished inline need none).
 */
export async function settle(
  collection: Key,
  mustExist: boolean,
  outboxes: OutboxItem[],
  onlyIds?: Set<number>,
): Promise<Record<string, unknown> | 'gone'> {
  const pending = outboxes.flatMap(pendingOf);
  const root = await applyDeltas(collection, pending, mustExist);
  const work = new Map(outboxes.map((o) => [o, outboxWork(o).filter((w) => !onlyIds || onlyIds.has(w.id))]));
  // A deleted list's emails are purged: nothing to validate.
  const queued = root === 'gone' ? [] : outboxes.filter((o) => !o.awaiting && work.get(o)!.length > 0);
  const byAccount = Map.groupBy(queued, (o) => o.account_id);
  const workIn = (own: OutboxItem[]) => own.flatMap((o) => work.get(o)!);
  // Sending and marking run together: a send that fails leaves its outboxes due at once, so the
  // sweeper's next recovery pass queues their unfinished emails again.
  const [sent, marked] = await Promise.allSettled([
    Promise.all([...byAccount].map(([accountId, own]) => enqueueValidation(accountId, workIn(own)))),
    Promise.all([
      markQueued(queued),
      deleteOutboxes(outboxes.filter((o) => !o.awaiting && !queued.includes(o))),
      ...outboxes.filter((o) => o.awaiting).map(dropOutboxDeltas),
    ]),
  ]);
  if (sent.status === 'rejected') {
    if (marked.status === 'fulfilled') await markQueued(queued, Date.now());
    throw sent.reason;
  }
  if (marked.status === 'rejected') throw marked.reason;
  await releaseTokens(collection, pending, root === 'gone' ? undefined : root);
  return root;
}

/**
 * A request's settle right after its commit. Its failure is not the
 * request's: what it committed stands, and the sweeper settles the rest
 * (undefined then: the caller reads the collection itself).
 */
export async function settleAfterRequest(
  collection: Key,
  mustExist: boolean,
  outboxes: OutboxItem[],
  onlyIds?: Set<number>,
): Promise<Record<string, unknown> | 'gone' | undefined> {
  try {
    return await settle(collection, mustExist, outboxes, onlyIds);
  } catch (error) {
    logger.warn('settling deferred; the sweeper will finish it', describeError(error));
    return undefined;
  }
}

/** Settles `ready` outboxes of any collections (left by crashed requests), grouped by collection, their emails restored first. */
async function settleStranded(outboxes: OutboxItem[]): Promise<void> {
  await restoreEmails(outboxes);
  for (const group of Map.groupBy(outboxes, (o) => o.collection.pk).values())
    await settle(group[0]!.collection, group[0]!.collection_must_exist, group);
}

/** Outboxes still `ready` (or holding their counts) this long after they were stored were stranded by a crash: no request lasts that long. */
export const STRANDED_AFTER_MS = 2 * 60_000;

/** Rounds of up to 100 outboxes per index partition one pass handles at most; the next pass takes the rest. */
const MAX_ROUNDS = 20;

export interface RecoveryOptions {
  /** Outboxes still `ready` after this long were stranded by a crash. */
  strandedAfterMs: number;
  /** `queued` work due before this time should be finished: what is not has lost its message. */
  dueBeforeMs: number;
  /** Stop starting rounds after this time (epoch ms). */
  deadline: number;
}

/**
 * Finds work that something lost — a process killed between the table and
 * the queue, a message past its retention, a purged queue, a local restart
 * (the local queue lives in memory) — and queues it again. Both sources are
 * indexes, never a scan: `ready` outboxes by age, `queued` ones by due time.
 */
export async function recoverLostWork(options: RecoveryOptions): Promise<{ settled: number; requeued: number }> {
  const stranded = await readyOutboxes(options.strandedAfterMs);
  await settleStranded(stranded);
  let requeued = 0;
  for (let round = 0; round < MAX_ROUNDS && Date.now() < options.deadline; round++) {
    const due = await queuedOutboxesDue(options.dueBeforeMs);
    if (due.length === 0) break;
    for (const outbox of due) {
      const unfinished = (await getEmails(outbox.account_id, outbox.email_ids)).filter(
        (e) => (e.status === 'pending' || e.status === 'processing') && !e.awaiting,
      );
      if (unfinished.length === 0) {
        await deleteOutbox(outbox);
        continue;
      }
      await markQueued([outbox], Math.max(Date.now(), options.dueBeforeMs) + DUE_AFTER_MS);
      const work = unfinished.map(workOf);
      await enqueueValidation(outbox.account_id, work).catch((error) =>
        logger.warn('could not re-queue unfinished emails; they come due again later', {
          account_id: outbox.account_id,
          email_ids: work.map((w) => w.id),
          ...describeError(error),
        }),
      );
      requeued += work.length;
    }
  }
  if (stranded.length || requeued) logger.warn('recovered lost validation work', { settled: stranded.length, requeued });
  return { settled: stranded.length, requeued };
}

/** After a restart of the local runtime: its queue started empty, so all queued work has lost its message. */
export const recoverAfterRestart = () =>
  recoverLostWork({ strandedAfterMs: 0, dueBeforeMs: Date.now() + DUE_AFTER_MS, deadline: Date.now() + 60_000 });

/**
 * Work held back for lack of credits resumes, oldest first, as far as the
 * balance now reaches: each held batch is debited, released and queued in one
 * transaction. Called after credits are added and by the sweeper.
 */
export async function resumeAwaiting(accountId: string): Promise<number> {
  let released = 0;
  for (const outbox of await awaitingOutboxes(accountId)) {
    const outcome = await releaseHeld(outbox);
    if (outcome === 'short') break;
    if (outcome === 'released') released++;
  }
  return released;
}

/**
 * One held outbox, as read by `resumeAwaiting`: its counts applied first if
 * its request died before that, then released when the balance covers it.
 */
export async function releaseHeld(outbox: OutboxItem): Promise<'released' | 'short' | 'skipped'> {
  if (outbox.deltas) {
    // Its request is applying its counts (within seconds of storing it): the next pass releases it. A release that
    // applied them too, from a copy read before the request dropped them, would count them twice.
    if (outbox.created_at_ms > Date.now() - STRANDED_AFTER_MS) return 'skipped';
    await restoreEmails([outbox]);
    await applyStrandedCounts(outbox);
  }
  const emails = (await getEmails(outbox.account_id, outbox.email_ids)).filter((e) => e.awaiting);
  if (emails.length === 0) {
    await deleteOutbox(outbox); // everything it held was deleted meanwhile
    return 'skipped';
  }
  const balance = await creditBalance(outbox.account_id);
  if (balance !== undefined && balance < emails.length) return 'short';

  const items: NamedItems = [['outbox', readyUpdate(outbox)]];
  if (balance !== undefined) items.push(['debit', debitCredits(outbox.account_id, emails.length)]);
  for (const email of emails) items.push([`email:${email.id}`, emailReleased(email)]);
  const listId = emails[0]!.email_list_id;
  if (listId !== null) items.push(['list', listReleased(outbox.account_id, listId, emails.length)]);
  // Lost a race (credits spent, an email deleted, the list deleted): the next run looks again.
  if ((await transactNamed(items)).length > 0) return 'skipped';
  await enqueueValidation(outbox.account_id, emails.map(workOf));
  await markQueued([{ ...outbox, awaiting: false }]);
  return 'released';
}

/**
 * The counts of a held outbox whose request died before applying them, and
 * their drop from the outbox, in one transaction: two releases holding the
 * same copy (credits added twice at once, the sweeper beside them) count
 * them once. A list deleted meanwhile has nothing to count: they are dropped.
 */
async function applyStrandedCounts(outbox: OutboxItem): Promise<void> {
  const deltas = outbox.deltas!;
  const failed = await transactNamed([
    ...namedParts('counts', deltaUpdates(outbox.collection, deltas, outbox.collection_must_exist, outbox.token)),
    ['outbox', deltasDropped(outbox)],
  ]);
  if (failed.includes('outbox')) return; // applied and dropped by another release
  if (failed.length > 0) await dropOutboxDeltas(outbox);
  else await releaseTokens(outbox.collection, [{ token: outbox.token, deltas }]);
}

/** The sweeper's pass over every account with held work. */
export async function resumeAllAwaiting(): Promise<void> {
  const accounts = new Set((await allAwaitingOutboxes()).map((o) => o.account_id));
  for (const accountId of accounts) await resumeAwaiting(accountId);
}
