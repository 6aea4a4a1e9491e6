import { platformEndpoint } from '#shared/http/messaging';
import { describeAccount } from '#shared/platform/account';

export const handler = platformEndpoint({}, async ({ caller }) => ({ body: await describeAccount(caller) }));
