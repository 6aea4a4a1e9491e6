import { deleted } from '#shared/http/endpoint';
import { platformEndpoint } from '#shared/http/messaging';
import { webhookEndpointId } from '#shared/http/path-ids';
import { removeWebhook } from '#shared/webhooks/manage';

export const handler = platformEndpoint({ path: webhookEndpointId }, async ({ caller, id }) => {
  await removeWebhook(id, caller.accountId);
  return deleted(id);
});
