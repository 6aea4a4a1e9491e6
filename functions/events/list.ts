import { platformEndpoint } from '#shared/http/messaging';
import { eventsQuery } from '#shared/http/platform-schemas';
import { listEvents } from '#shared/events/list';
import { eventWithFileUrls } from '#shared/files/urls';

/** The caller's events feed: a user token its user's, a secret key the account's. */
export const handler = platformEndpoint({ query: eventsQuery, credential: 'any' }, async ({ caller, query }) => {
  const page = await listEvents(caller, query);
  return { body: { ...page, data: await Promise.all(page.data.map((event) => eventWithFileUrls(caller.accountId, event))) } };
});
