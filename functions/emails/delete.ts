import { deleted } from '#shared/http/endpoint';
import { emailEndpoint } from '#shared/http/email';
import { removeEmail } from '#shared/email/visible';
import { emailId } from '#shared/http/path-ids';

export const handler = emailEndpoint({ path: emailId }, async ({ caller, id }) => {
  await removeEmail(caller, id);
  return deleted(id);
});
