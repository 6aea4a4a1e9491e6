import { emailEndpoint } from '#shared/http/email';
import { createImport } from '#shared/email/imports';
import { emailListId } from '#shared/http/path-ids';
import { idempotent } from '#shared/http/idempotency';

/** A new CSV import of the list (JSON `{}`): its presigned upload; the import starts by itself once the file is there. */
export const handler = emailEndpoint({ path: emailListId, idempotent: idempotent() }, async ({ caller, id, idempotency }) => ({
  status: 201,
  body: await createImport(caller, id, idempotency),
}));
