import {
  accountWebhooks,
  deleteWebhook,
  findWebhook,
  newWebhookId,
  putWebhook,
  recentAttempts,
  rotateSecret,
  type Webhook,
} from '#shared/data/webhooks';
import { nowSeconds } from '#shared/util/ids';
import { EVENT_TYPES, isEventType, ROTATION_OVERLAP_SECONDS, type EventType } from '#shared/webhooks/event-types';
import { newSecret, seal } from '#shared/webhooks/secrets';
import { checkWebhookUrl } from '#shared/webhooks/url-guard';

/** A request the operator can fix: the admin command line prints it as a usage error. */
export class WebhookInputError extends Error {}

/** Most endpoints per account: the stream consumer reads them all for each change of the account. */
export const MAX_WEBHOOKS_PER_ACCOUNT = 20;

export function parseEventTypes(raw: string | undefined): EventType[] | null {
  if (raw === undefined) return null;
  const types = [...new Set(raw.split(',').map((t) => t.trim()))];
  const unknown = types.filter((t) => !isEventType(t));
  if (unknown.length > 0 || types.length === 0) {
    throw new WebhookInputError(`unknown event type ${unknown.map((t) => `"${t}"`).join(', ')}; the types are ${EVENT_TYPES.join(', ')}`);
  }
  return types as EventType[];
}

/** What may be shown about an endpoint: never a secret, sealed or not. */
export const presentWebhook = (w: Webhook) => ({
  webhook_id: w.id,
  url: w.url,
  events: w.events ?? [...EVENT_TYPES],
  created_at: w.created_at,
  failing_since: w.failing_since,
  disabled_at: w.disabled_at,
  disabled_reason: w.disabled_reason,
  previous_secret_signs_until: w.previous_secret && w.previous_until !== null && w.previous_until > nowSeconds() ? w.previous_until : null,
});

export async function createWebhook(accountId: string, url: string, events: EventType[] | null) {
  const check = await checkWebhookUrl(url);
  if (!check.ok) throw new WebhookInputError(`--url refused: ${check.reason}`);
  if ((await accountWebhooks(accountId, MAX_WEBHOOKS_PER_ACCOUNT)).length >= MAX_WEBHOOKS_PER_ACCOUNT) {
    throw new WebhookInputError(`account ${accountId} has ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks already`);
  }
  const id = newWebhookId();
  const secret = newSecret();
  await putWebhook({ id, account_id: accountId, url: check.url.href, events, secret: await seal(secret, id), created_at: nowSeconds() });
  return { webhook_id: id, secret };
}

export const listWebhooks = async (accountId: string) => (await accountWebhooks(accountId, MAX_WEBHOOKS_PER_ACCOUNT)).map(presentWebhook);

export async function removeWebhook(id: string): Promise<boolean> {
  const w = await findWebhook(id);
  if (!w) return false;
  await deleteWebhook(w);
  return true;
}

/** A new secret; the old one keeps signing (a second signature) for ROTATION_OVERLAP_SECONDS. */
export async function rotateWebhookSecret(id: string) {
  const w = await findWebhook(id);
  if (!w) return undefined;
  const secret = newSecret();
  const until = nowSeconds() + ROTATION_OVERLAP_SECONDS;
  if (!(await rotateSecret(w, await seal(secret, w.id), until)))
    throw new Error('the secret changed meanwhile (another rotation); try again');
  return { webhook_id: w.id, secret, previous_secret_signs_until: until };
}

export async function webhookDeliveries(id: string, limit = 100) {
  const w = await findWebhook(id);
  if (!w) return undefined;
  return { ...presentWebhook(w), deliveries: await recentAttempts(w, limit) };
}
