import { emailEndpoint } from '#shared/http/email';
import { createImport } from '#shared/email/imports';
import { emailListId } from '#shared/http/path-ids';

/** A new CSV import of the list (JSON `{}`): its presigned upload; the import starts by itself once the file is there. */
export const handler = emailEndpoint({ path: emailListId, idempotent: true }, async ({ caller, id, idempotency }) => ({
  status: 201,
  body: await createImport(caller, id, idempotency),
}));
