import { rowsOf, type Route } from '#shared/routes/route';

/** A user's client, with the user's token. */
const user = rowsOf('messaging', 'user');

/** The messaging API's conversations and messages. */
export const messagingRoutes: readonly Route[] = [
  user('GET', '/v1/conversations', 'conversations/list', 'read'),
  user('POST', '/v1/conversations', 'conversations/create', 'readWrite'),
  user('GET', '/v1/conversations/{id}', 'conversations/get', 'read'),
  user('PUT', '/v1/conversations/{id}', 'conversations/update', 'readWrite'),
  user('DELETE', '/v1/conversations/{id}', 'conversations/delete', 'readWrite', {
    sends: ['purge'],
    timeoutSeconds: 20,
    files: ['delete'],
  }),
  // Messages show their files' attachments with download URLs made for the reader (read); sending or editing attaches
  // uploaded files (read: is it there; write: tagged attached) and lets go of removed ones (delete).
  user('GET', '/v1/messages', 'messages/list', 'read', { files: ['read'] }),
  user('POST', '/v1/messages', 'messages/create', 'readWrite', {
    sends: ['delivery'],
    timeoutSeconds: 20,
    files: ['read', 'write', 'delete'],
  }),
  user('GET', '/v1/messages/{id}', 'messages/get', 'read', { files: ['read'] }),
  user('PUT', '/v1/messages/{id}', 'messages/update', 'readWrite', { sends: ['purge'], files: ['read', 'write', 'delete'] }),
  user('DELETE', '/v1/messages/{id}', 'messages/delete', 'readWrite', {
    sends: ['delivery', 'purge'],
    timeoutSeconds: 20,
    files: ['delete'],
  }),
  // Uploads go straight to storage with a presigned PUT (write); a file shows `uploaded` once its object is there (read).
  user('POST', '/v1/files', 'files/create', 'readWrite', { files: ['write'] }),
  user('GET', '/v1/files/{id}', 'files/get', 'readWrite', { files: ['read'] }),
];
