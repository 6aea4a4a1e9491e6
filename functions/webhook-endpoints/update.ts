import { platformEndpoint } from '#shared/http/messaging';
import { webhookEndpointId } from '#shared/http/path-ids';
import { updateWebhookBody } from '#shared/http/platform-schemas';
import { parseEventTypes, presentWebhookEndpoint } from '#shared/webhooks/manage';
import { changeWebhook } from '#shared/webhooks/subscribe';

export const handler = platformEndpoint({ path: webhookEndpointId, body: updateWebhookBody }, async ({ caller, id, body }) => {
  const events = body.enabled_events === undefined ? undefined : parseEventTypes(body.enabled_events);
  return { body: presentWebhookEndpoint(await changeWebhook(caller.accountId, id, { url: body.url, events })) };
});
