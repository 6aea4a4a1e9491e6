import { platformEndpoint } from '#shared/http/messaging';
import { webhookEndpointId } from '#shared/http/path-ids';
import { presentWebhookEndpoint, requireWebhook } from '#shared/webhooks/manage';

export const handler = platformEndpoint({ path: webhookEndpointId }, async ({ caller, id }) => ({
  body: presentWebhookEndpoint(await requireWebhook(id, caller.accountId)),
}));
