import { deleted } from '#shared/http/endpoint';
import { emailEndpoint } from '#shared/http/email';
import { removeEmail } from '#shared/email/visible';
import { numericId } from '#shared/email/schemas';

export const handler = emailEndpoint({}, async ({ principal, pathId }) => {
  const id = numericId(pathId);
  await removeEmail(principal, id);
  return deleted(id!);
});
