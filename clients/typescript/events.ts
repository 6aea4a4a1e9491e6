import { unwrap } from './errors.ts';
import type { MessagingClient } from './rest.ts';
import type { EventList } from './types.ts';

export interface CatchUpOptions {
  /** The id of the last event the app has; without it the feed is read from its oldest event. */
  after?: string;
  /** Events per page, 1 to 100 (the API's default: 100). */
  limit?: number;
}

/**
 * The pages of `GET /v1/events` after `options.after`, oldest first, until
 * the present: each next page is asked from the last event of the one
 * before, so none is missed or repeated. A user token reads its user's
 * events, a secret key the account's. Throws `CursorExpiredError` (`410`)
 * when `after` is older than the feed keeps, `ApiError` for any other
 * refusal.
 */
export async function* catchUp(client: MessagingClient, options: CatchUpOptions = {}): AsyncGenerator<EventList, void, undefined> {
  let after = options.after;
  for (;;) {
    const page = unwrap(await client.GET('/v1/events', { params: { query: { after, limit: options.limit } } }));
    const last = page.data.at(-1);
    if (last) yield page;
    // An empty page that claims more would ask the same cursor forever.
    if (!page.has_more || !last) return;
    after = last.id;
  }
}
