import { emailEndpoint, pageResponse } from '#shared/http/email';
import { listStandaloneEmails } from '#shared/email/visible';
import { presentEmail } from '#shared/email/present';
import { pageQuery } from '#shared/http/email-schemas';

export const handler = emailEndpoint({ query: pageQuery }, async ({ caller, query }) => {
  const { emails, position } = await listStandaloneEmails(caller, query.page ?? 1);
  return { body: pageResponse('emails', emails.map(presentEmail), position) };
});
