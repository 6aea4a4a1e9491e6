import { platformEndpoint } from '#shared/http/messaging';
import { eventsQuery } from '#shared/http/platform-schemas';
import { listEvents } from '#shared/events/list';

/** The caller's events feed: a user token its user's, a secret key the account's. */
export const handler = platformEndpoint({ query: eventsQuery, credential: 'any' }, async ({ caller, query }) => ({
  body: await listEvents(caller, query),
}));
