import { emailEndpoint } from '#shared/http/email';
import { describeAccount } from '#shared/platform/account';

/** The account as GET /v1/account shows it: with a secret key or a user token, as the rest of the email API. */
export const handler = emailEndpoint({}, async ({ caller }) => ({ body: await describeAccount(caller) }));
