import { platformEndpoint } from '#shared/http/messaging';
import { webhookEndpointId } from '#shared/http/path-ids';
import { presentWebhookEndpoint, rotateWebhookSecret } from '#shared/webhooks/manage';

/** A new secret (shown only here); the previous one also signs for 24 hours, so receivers can switch over. */
export const handler = platformEndpoint({ path: webhookEndpointId }, async ({ caller, id }) => {
  const { webhook, secret } = await rotateWebhookSecret(id, caller.accountId);
  return { body: presentWebhookEndpoint(webhook, secret) };
});
