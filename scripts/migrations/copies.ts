import { transactNamed, txUpdate, type NamedItems } from '#shared/db/batch';
import { attr, condition, update } from '#shared/db/expression';
import { getItem, type Item } from '#shared/db/items';
import { scanPages } from '#shared/db/scan';
import { entryKey, locatorKey } from '#shared/data/message-items';

/**
 * 0.4 → 0.5: a one-to-one message's two entries carry a copy of it
 * (docs/data-model.md), which 0.4's messages lack; and while a deployment
 * is being updated, a 0.4 function still running may change a message
 * without its copies. Run once after the deploy: each one-to-one message
 * is copied whole into the entries its participants still have, in one
 * transaction that holds only if the message did not change since it was
 * read (a change meanwhile is read again), and is marked `copied`. A
 * participant without the message (their conversation deleted) is left
 * out. Idempotent: run it again at any time.
 */
export async function migrateCopies(log: (line: string) => void = () => undefined): Promise<{ copied: number; skipped: number }> {
  let copied = 0;
  let skipped = 0;
  for await (const page of scanPages(condition`${attr('type')} = ${'message'} AND contains(thread, ${'+'})`)) {
    for (const scanned of page) {
      // Bounded: a message changed between each read and its transaction three times over is left for the next run.
      let done = false;
      let message: Item | undefined = scanned;
      for (let attempt = 0; attempt < 3 && message && !done; attempt++) {
        done = await copyInto(message);
        if (!done) message = await getItem({ pk: String(scanned.pk), sk: String(scanned.sk) }, true);
      }
      if (done) copied++;
      else skipped++;
      log(`${String(scanned.id)}: ${done ? 'copied' : 'changing, left for the next run'}`);
    }
  }
  return { copied, skipped };
}

/** True when the copies were written against the message as read. */
async function copyInto(m: Item): Promise<boolean> {
  const accountId = String(m.account_id);
  const sender = String(m.contact_id);
  const participants = String(m.thread).split('+');
  const conversations = new Map<string, string>();
  for (const p of participants) {
    const locator = await getItem(locatorKey({ accountId, contactId: p }, String(m.id)), true);
    if (locator) conversations.set(p, String(locator.conversation_id));
  }
  const senderConversation = conversations.get(sender);
  // The message as read: a change since (an edit, a reaction, its first read) fails this, and the copy is made again.
  const unchanged = update().set`copied = ${true}`.when`attribute_exists(pk)`.when`${attr('message')} = ${m.message}`
    .when`extras_bytes = ${m.extras_bytes ?? 0}`;
  if (m.updated_at === undefined) unchanged.when`attribute_not_exists(updated_at)`;
  else unchanged.when`updated_at = ${m.updated_at}`;
  if (m.read_at === undefined) unchanged.when`attribute_not_exists(read_at)`;
  else unchanged.when`read_at = ${m.read_at}`;
  const parts: NamedItems = [['message', txUpdate({ pk: String(m.pk), sk: String(m.sk) }, unchanged)]];
  for (const [p, conversationId] of conversations) {
    const copy = update().set`${attr('message')} = ${m.message}`.set`reactions = ${m.reactions ?? {}}`
      .set`attachments = ${m.attachments ?? []}`.set`extras_bytes = ${m.extras_bytes ?? 0}`.when`attribute_exists(pk)`;
    if (m.updated_at !== undefined) copy.set`updated_at = ${m.updated_at}`;
    if (p === sender && m.read_at !== undefined) copy.set`first_read_at = ${m.read_at}`;
    if (p !== sender && senderConversation !== undefined) copy.set`sender_conversation_id = ${senderConversation}`;
    parts.push([`copy:${p}`, txUpdate(entryKey({ accountId, contactId: p }, conversationId, String(m.id)), copy)]);
  }
  const failed = await transactNamed(parts);
  return failed.length === 0;
}
