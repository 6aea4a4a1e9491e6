import { platformEndpoint } from '#shared/http/messaging';
import { createGroupBody } from '#shared/http/platform-schemas';
import { createGroup, presentGroup } from '#shared/platform/groups';
import { idempotent } from '#shared/http/idempotency';

export const handler = platformEndpoint({ body: createGroupBody, idempotent: idempotent() }, async ({ caller, body, idempotency }) => ({
  status: 201,
  body: presentGroup(await createGroup(caller, body, idempotency)),
}));
