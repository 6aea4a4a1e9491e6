import { messagingEndpoint } from '#shared/http/messaging';
import { createFileBody } from '#shared/http/messaging-schemas';
import { createFile } from '#shared/files/files';
import { idempotent } from '#shared/http/idempotency';

export const handler = messagingEndpoint({ body: createFileBody, idempotent: idempotent() }, async ({ principal, body, idempotency }) => ({
  status: 201,
  body: await createFile(principal, body, idempotency),
}));
