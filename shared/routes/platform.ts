import { rowsOf, type Route } from '#shared/routes/route';

/** The account's backend, with its secret key. */
const platform = rowsOf('messaging', 'secret');

/** The messaging API's platform endpoints: contacts and their tokens, groups and their members, webhook endpoints, the account. */
export const platformRoutes: readonly Route[] = [
  platform('POST', '/v1/contacts', 'contacts/create', 'readWrite'),
  platform('GET', '/v1/contacts', 'contacts/list', 'read'),
  // A user token may read its account's contacts too: a read-only directory.
  platform('GET', '/v1/contacts/{id}', 'contacts/get', 'read', { credential: 'any' }),
  platform('PUT', '/v1/contacts/{id}', 'contacts/update', 'readWrite'),
  platform('DELETE', '/v1/contacts/{id}', 'contacts/delete', 'readWrite', { sends: ['purge'], timeoutSeconds: 20 }),
  platform('POST', '/v1/contacts/{id}/tokens', 'contact-tokens/create', 'readWrite', { seals: true }),
  platform('GET', '/v1/contacts/{id}/tokens', 'contact-tokens/list', 'read'),
  platform('DELETE', '/v1/contacts/{id}/tokens/{token_id}', 'contact-tokens/delete', 'readWrite'),
  // A group of 1,000 arrives with its members: 40 batch writes and 10 batch reads, within 20 s on a slow day.
  platform('POST', '/v1/groups', 'groups/create', 'readWrite', { timeoutSeconds: 20 }),
  platform('GET', '/v1/groups', 'groups/list', 'read'),
  platform('GET', '/v1/groups/{id}', 'groups/get', 'read'),
  platform('PUT', '/v1/groups/{id}', 'groups/update', 'readWrite'),
  platform('DELETE', '/v1/groups/{id}', 'groups/delete', 'readWrite', { sends: ['purge'], timeoutSeconds: 20 }),
  platform('POST', '/v1/groups/{id}/members', 'group-members/add', 'readWrite'),
  platform('GET', '/v1/groups/{id}/members', 'group-members/list', 'read'),
  platform('DELETE', '/v1/groups/{id}/members/{contact_id}', 'group-members/remove', 'readWrite'),
  platform('POST', '/v1/webhook_endpoints', 'webhook-endpoints/create', 'readWrite', { seals: true }),
  platform('GET', '/v1/webhook_endpoints', 'webhook-endpoints/list', 'read'),
  platform('GET', '/v1/webhook_endpoints/{id}', 'webhook-endpoints/get', 'read'),
  platform('PUT', '/v1/webhook_endpoints/{id}', 'webhook-endpoints/update', 'readWrite'),
  platform('DELETE', '/v1/webhook_endpoints/{id}', 'webhook-endpoints/delete', 'readWrite'),
  platform('POST', '/v1/webhook_endpoints/{id}/rotate_secret', 'webhook-endpoints/rotate-secret', 'readWrite', { seals: true }),
  platform('GET', '/v1/account', 'account/messaging', 'read', { showsLimits: true }),
  // A user token reads its user's events, a secret key the account's.
  platform('GET', '/v1/events', 'events/list', 'read', { credential: 'any', files: ['read'] }),
];
