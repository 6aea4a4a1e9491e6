import { platformEndpoint } from '#shared/http/messaging';
import { createWebhookBody } from '#shared/http/platform-schemas';
import { parseEventTypes, presentWebhookEndpoint } from '#shared/webhooks/manage';
import { createWebhook } from '#shared/webhooks/subscribe';
import { idempotent } from '#shared/http/idempotency';

/** The secret is shown in this answer only, and in an idempotent replay of it (kept sealed with the replay). */
export const handler = platformEndpoint(
  { body: createWebhookBody, idempotent: idempotent(), secretFields: ['secret'] },
  async ({ caller, body, idempotency }) => {
    const { webhook, secret } = await createWebhook(caller.accountId, body.url, parseEventTypes(body.enabled_events), 'url', idempotency);
    return { status: 201, body: presentWebhookEndpoint(webhook, secret) };
  },
);
