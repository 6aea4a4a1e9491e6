import { messagingEndpoint } from '#shared/http/messaging';
import { createFileBody } from '#shared/http/messaging-schemas';
import { createFile } from '#shared/files/files';

export const handler = messagingEndpoint({ body: createFileBody }, async ({ principal, body }) => ({
  status: 201,
  body: await createFile(principal, body),
}));
