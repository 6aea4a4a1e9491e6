import { rowsOf, type Route } from '#shared/routes/route';

/** A user's client, with the user's token. */
const user = rowsOf('messaging', 'user');

/** The messaging API's conversations and messages. */
export const messagingRoutes: readonly Route[] = [
  user('GET', '/v1/conversations', 'conversations/list', 'read'),
  user('POST', '/v1/conversations', 'conversations/create', 'readWrite'),
  user('GET', '/v1/conversations/{id}', 'conversations/get', 'read'),
  user('PUT', '/v1/conversations/{id}', 'conversations/update', 'readWrite'),
  user('DELETE', '/v1/conversations/{id}', 'conversations/delete', 'readWrite', { sends: ['purge'], timeoutSeconds: 20 }),
  user('GET', '/v1/messages', 'messages/list', 'read'),
  user('POST', '/v1/messages', 'messages/create', 'readWrite', { sends: ['delivery'], timeoutSeconds: 20 }),
  user('GET', '/v1/messages/{id}', 'messages/get', 'read'),
  user('PUT', '/v1/messages/{id}', 'messages/update', 'readWrite'),
  user('DELETE', '/v1/messages/{id}', 'messages/delete', 'readWrite', { sends: ['delivery'], timeoutSeconds: 20 }),
];
