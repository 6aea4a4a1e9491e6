import { emailEndpoint, pageResponse } from '#shared/http/email';
import { listListEmails } from '#shared/email/lists';
import { presentEmail } from '#shared/email/present';
import { numericId, pageQuery } from '#shared/email/schemas';

export const handler = emailEndpoint({ query: pageQuery }, async ({ principal, pathId, query }) => {
  const { emails, position } = await listListEmails(principal, numericId(pathId), query.page ?? 1);
  return { body: pageResponse('emails', emails.map(presentEmail), position) };
});
