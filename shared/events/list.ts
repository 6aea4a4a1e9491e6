import { eventsAfter, type Feed } from '#shared/data/events';
import type { Caller } from '#shared/data/tokens';
import { gone, invalid } from '#shared/errors';
import { feedCursor } from '#shared/events/cursor';
import { retentionDays } from '#shared/data/event-retention';
import { eventWithFileUrls } from '#shared/files/urls';
import { fittedPage } from '#shared/messaging/size';

/** Whose events a caller reads: a user token its user's (their views), a secret key the account's. */
export const feedOf = (caller: Caller): Feed =>
  caller.kind === 'user' ? { accountId: caller.accountId, contactId: caller.contactId } : { accountId: caller.accountId };

/** GET /v1/events: the events after `after`, oldest first (one Query), as the response shows them. */
export async function listEvents(caller: Caller, query: { after?: string; limit?: number }) {
  const feed = feedOf(caller);
  const cursor = feedCursor(feed, query.after);
  const unknown = () => invalid(`No such event in this feed: '${query.after}'`, 'after', 'invalid_cursor');
  if ('problem' in cursor) {
    if (cursor.problem === 'invalid') throw unknown();
    throw gone(
      `Events are kept ${retentionDays()} days: '${query.after}' is older; read the current state and start over without \`after\``,
      'after',
    );
  }
  const page = await eventsAfter(feed, cursor.seq, query.limit ?? 100, query.after);
  if (!page.afterFound) throw unknown();
  // With download URLs made for this reader now, as many events as one response holds: the next page starts after the last.
  const fitted = fittedPage(await Promise.all(page.events.map((event) => eventWithFileUrls(caller.accountId, event))), page.hasMore);
  return { has_more: fitted.hasMore, data: fitted.items };
}
