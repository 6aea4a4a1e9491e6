import { rowsOf, type Route } from '#shared/routes/route';

/** Either credential: a user token or the account's secret key. */
const email = rowsOf('email', 'any');

/** The email validation API: standalone emails, email lists and their emails, the account. */
export const emailRoutes: readonly Route[] = [
  email('POST', '/api/v1/emails', 'emails/create', 'readWrite', { sends: ['validation'], timeoutSeconds: 15, validates: true }),
  email('GET', '/api/v1/emails', 'emails/list', 'read'),
  email('GET', '/api/v1/email/{id}', 'emails/get', 'read'),
  email('DELETE', '/api/v1/email/{id}', 'emails/delete', 'readWrite'),
  email('POST', '/api/v1/emailList', 'email-lists/create', 'readWrite'),
  email('GET', '/api/v1/emailLists', 'email-lists/list', 'read'),
  email('GET', '/api/v1/emailList/{id}', 'email-lists/get', 'read'),
  // Its purge deletes the list's exports' files too.
  email('DELETE', '/api/v1/emailList/{id}', 'email-lists/delete', 'readWrite', { sends: ['purge'], files: ['delete'], timeoutSeconds: 20 }),
  email('GET', '/api/v1/emailList/{id}/emails', 'email-lists/emails', 'read'),
  // The create writes a small list's CSV inline, and the rest from the purge queue's worker.
  email('POST', '/api/v1/emailList/{id}/exports', 'email-exports/create', 'readWrite', {
    sends: ['purge'],
    // Deletes a file it wrote for a list deleted meanwhile.
    files: ['write', 'delete'],
    timeoutSeconds: 20,
  }),
  email('GET', '/api/v1/emailList/{id}/exports/{exportId}', 'email-exports/get', 'read', { files: ['read'] }),
  email('GET', '/api/v1/account', 'account/email', 'read', { showsLimits: true }),
  email('POST', '/api/v1/emailList/{id}/emails', 'email-lists/add', 'readWrite', { sends: ['validation'], timeoutSeconds: 20 }),
  // Signs the upload (a PUT: write) and queues the job's first look for the file, on the purge queue's worker.
  email('POST', '/api/v1/emailList/{id}/imports', 'email-lists/import-create', 'readWrite', { sends: ['purge'], files: ['write'] }),
  // Looks for the upload (read) and, when it is there, queues the import's job at once.
  email('GET', '/api/v1/emailList/{id}/imports/{importId}', 'email-lists/import-get', 'readWrite', {
    sends: ['purge'],
    files: ['read', 'write'],
  }),
];
