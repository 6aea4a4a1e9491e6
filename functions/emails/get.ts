import { emailEndpoint } from '#shared/http/email';
import { visibleEmail } from '#shared/email/visible';
import { presentEmail } from '#shared/email/present';
import { emailId } from '#shared/http/path-ids';

export const handler = emailEndpoint({ path: emailId }, async ({ caller, id }) => ({
  body: presentEmail(await visibleEmail(caller, id)),
}));
