import { messagingEndpoint } from '#shared/http/messaging';
import { fileId } from '#shared/http/path-ids';
import { showFile } from '#shared/files/files';

export const handler = messagingEndpoint({ path: fileId }, async ({ principal, id }) => ({ body: await showFile(principal, id) }));
