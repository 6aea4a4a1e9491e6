import { emailEndpoint } from '#shared/http/email';
import { createExport } from '#shared/email/exports';
import { createExportBody } from '#shared/http/email-schemas';
import { emailListId } from '#shared/http/path-ids';
import { idempotent } from '#shared/http/idempotency';

/** Write the CSV inline for up to this long (a small list's whole export), then continue from the queue. */
const INLINE_EXPORT_MS = 5_000;

export const handler = emailEndpoint(
  { path: emailListId, body: createExportBody, idempotent: idempotent() },
  async ({ caller, id, body, idempotency }) => ({
    status: 201,
    body: await createExport(caller, id, body, Date.now() + INLINE_EXPORT_MS, idempotency),
  }),
);
