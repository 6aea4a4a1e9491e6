import { emailEndpoint } from '#shared/http/email';
import { visibleEmail } from '#shared/email/visible';
import { presentEmail } from '#shared/email/present';
import { numericId } from '#shared/email/schemas';

export const handler = emailEndpoint({}, async ({ principal, pathId }) => ({
  body: presentEmail(await visibleEmail(principal, numericId(pathId))),
}));
