import { emailEndpoint } from '#shared/http/email';
import { createEmails } from '#shared/email/emails';
import { presentEntry } from '#shared/email/present';
import { emailsBody } from '#shared/http/email-schemas';
import { idempotent } from '#shared/http/idempotency';

/** Inline validation stops here, leaving headroom under API Gateway's 29 s and the ~3 s budget docs/openapi.yaml states. */
const INLINE_BUDGET_MS = 2_500;

export const handler = emailEndpoint(
  { body: emailsBody, entryLists: ['emails'], idempotent: idempotent() },
  async ({ caller, body, idempotency }) => ({
    status: 201,
    body: { emails: (await createEmails(caller, body.emails, Date.now() + INLINE_BUDGET_MS, idempotency)).map(presentEntry) },
  }),
);
