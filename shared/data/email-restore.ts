import { transactNamed, txCheck, txPut, TRANSACTION_MAX_ITEMS, type NamedItems } from '#shared/db/batch';
import { condition } from '#shared/db/expression';
import { keys } from '#shared/db/keys';
import { emailItem, getEmails, guardKey, pendingEmail, type EmailRecord } from '#shared/data/emails';
import type { OutboxItem } from '#shared/data/outbox';

/** The emails an outbox names, as their chunk stored them; undefined when it was written without their addresses. */
export function outboxEmails(outbox: OutboxItem): EmailRecord[] | undefined {
  const { addresses, seqs, emails_created_at: createdAt } = outbox;
  if (!addresses || !seqs || createdAt === undefined) return undefined;
  return outbox.email_ids.map((id, i) =>
    pendingEmail({
      id,
      accountId: outbox.account_id,
      address: addresses[i]!,
      listId: outbox.list_id ?? null,
      seq: seqs[i]!,
      createdAt,
      awaiting: outbox.awaiting,
    }),
  );
}

/**
 * After a crash between an add's transaction and its batch writes, the
 * emails that an unsettled outbox (one still holding its counts) names may
 * be missing: each is written again while still absent — and, in a list,
 * only while its address guard still names it and the list exists, so an
 * email deleted or a list deleted meanwhile stays deleted. Returns how many
 * were restored.
 */
export async function restoreEmails(outboxes: OutboxItem[]): Promise<number> {
  let restored = 0;
  for (const outbox of outboxes) {
    const named = outbox.deltas ? outboxEmails(outbox) : undefined;
    if (!named) continue;
    const found = new Set((await getEmails(outbox.account_id, outbox.email_ids)).map((e) => e.id));
    const listId = outbox.list_id ?? null;
    const missing = named.filter((email) => !found.has(email.id));
    // In a list each email takes two items (itself and its guard's check), beside the list's check.
    const perTransaction = listId === null ? TRANSACTION_MAX_ITEMS : Math.floor((TRANSACTION_MAX_ITEMS - 1) / 2);
    for (let i = 0; i < missing.length; i += perTransaction) {
      const part = missing.slice(i, i + perTransaction);
      if (await restoreTogether(part, listId)) restored += part.length;
      // One of them was deleted meanwhile (or the list was): the rest one by one.
      else if (part.length > 1) for (const email of part) if (await restoreTogether([email], listId)) restored++;
    }
  }
  return restored;
}

async function restoreTogether(emails: EmailRecord[], listId: number | null): Promise<boolean> {
  const items: NamedItems = emails.flatMap((email): NamedItems => [
    [`email:${email.id}`, txPut(emailItem(email), condition`attribute_not_exists(pk)`)],
    ...(listId === null
      ? []
      : [
          [
            `guard:${email.id}`,
            txCheck(guardKey(email.account_id, listId, email.email), condition`email_id = ${email.id}`),
          ] as NamedItems[number],
        ]),
  ]);
  if (listId !== null)
    items.push(['list', txCheck(keys.list.key({ acct: emails[0]!.account_id, list: listId }), condition`attribute_exists(pk)`)]);
  return (await transactNamed(items)).length === 0;
}
