import { deleted } from '#shared/http/endpoint';
import { emailEndpoint } from '#shared/http/email';
import { removeEmail } from '#shared/email/visible';
import { emailId } from '#shared/http/path-ids';

export const handler = emailEndpoint({ path: emailId }, async ({ principal, id }) => {
  await removeEmail(principal, id);
  return deleted(id);
});
