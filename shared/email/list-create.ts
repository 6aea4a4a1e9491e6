import { createEmailList, getEmailList } from '#shared/data/email-lists';
import { journalStep, type Hold } from '#shared/data/idempotency';
import type { Tenant } from '#shared/data/tokens';

// A module of its own: the other list routes' bundles then carry no idempotency records (test/infra/bundles.test.ts).
const LIST_STEP = 'list';

/**
 * A new email list. Under an Idempotency-Key, the list's id is journaled in
 * the creating transaction, so a retry of an interrupted request answers
 * the list its first attempt made rather than making a second.
 */
export async function createList(who: Tenant, input: { name: string; description?: string }, hold?: Hold) {
  const earlier = hold?.resumed ? hold.steps[LIST_STEP] : undefined;
  const made = typeof earlier === 'number' ? await getEmailList(who.accountId, earlier) : undefined;
  if (made) return made;
  return createEmailList(who.accountId, input, hold && ((id) => journalStep(hold, LIST_STEP, id)));
}
