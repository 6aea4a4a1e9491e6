import { emailEndpoint } from '#shared/http/email';
import { showExport } from '#shared/email/exports';
import { listExportId } from '#shared/http/path-ids';

export const handler = emailEndpoint({ path: listExportId }, async ({ caller, id: [listId, exportId] }) => ({
  body: await showExport(caller, listId, exportId),
}));
