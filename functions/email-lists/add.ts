import { emailEndpoint } from '#shared/http/email';
import { addToList } from '#shared/email/add-to-list';
import { presentEmailList } from '#shared/email/present';
import { emailsBody, numericId } from '#shared/email/schemas';

export const handler = emailEndpoint({ body: emailsBody, idempotent: true }, async ({ principal, pathId, body }) => {
  const { list, entries } = await addToList(principal, numericId(pathId), body.emails);
  return { body: { emailList: presentEmailList(list), emails: entries } };
});
