import { platformEndpoint } from '#shared/http/messaging';
import { createGroupBody } from '#shared/http/platform-schemas';
import { createGroup, presentGroup } from '#shared/platform/groups';

export const handler = platformEndpoint({ body: createGroupBody, idempotent: true }, async ({ caller, body, idempotency }) => ({
  status: 201,
  body: presentGroup(await createGroup(caller, body, idempotency)),
}));
