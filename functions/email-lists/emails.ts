import { emailEndpoint, pageResponse } from '#shared/http/email';
import { listListEmails } from '#shared/email/lists';
import { presentEmail } from '#shared/email/present';
import { pageQuery } from '#shared/http/email-schemas';
import { emailListId } from '#shared/http/path-ids';

export const handler = emailEndpoint({ path: emailListId, query: pageQuery }, async ({ caller, id, query }) => {
  const { emails, position } = await listListEmails(caller, id, query.page ?? 1);
  return { body: pageResponse('emails', emails.map(presentEmail), position) };
});
