import { platformEndpoint } from '#shared/http/messaging';
import { contactId } from '#shared/http/path-ids';
import { createTokenBody } from '#shared/http/platform-schemas';
import { issueContactToken } from '#shared/platform/tokens';
import { idempotent } from '#shared/http/idempotency';

/** The token is shown in this answer only, and in an idempotent replay of it (kept sealed with the replay). */
export const handler = platformEndpoint(
  { path: contactId, body: createTokenBody, idempotent: idempotent(), secretFields: ['token'] },
  async ({ caller, id, body, idempotency }) => ({
    status: 201,
    body: await issueContactToken(caller, id, body.expires_in, idempotency),
  }),
);
