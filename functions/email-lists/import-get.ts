import { emailEndpoint } from '#shared/http/email';
import { showImport } from '#shared/email/imports';
import { listImportIds } from '#shared/http/path-ids';

/** An import of the list; one whose upload is there starts now rather than at the sweeper's next pass. */
export const handler = emailEndpoint({ path: listImportIds }, async ({ caller, id: [listId, importId] }) => ({
  body: await showImport(caller, listId, importId),
}));
