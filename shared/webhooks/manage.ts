import { accountWebhooks, deleteWebhook, findWebhook, getWebhook, recentAttempts, rotateSecret, type Webhook } from '#shared/data/webhooks';
import { conflict, invalid, notFound } from '#shared/errors';
import { nowSeconds } from '#shared/util/ids';
import { EVENT_TYPES, isEventType, type EventType } from '#shared/stream/event';
import { ROTATION_OVERLAP_SECONDS } from '#shared/webhooks/timing';
import { seal } from '#shared/util/sealing';
import { newSecret } from '#shared/webhooks/secrets';

/**
 * An account's webhook endpoints: the domain both doors use, the platform
 * endpoints (`/v1/webhook_endpoints`) and the admin command line. Refusals
 * are domain errors naming the parameter at fault.
 */

/** Most endpoints per account: the stream consumer reads them all for each change of the account. */
export const MAX_WEBHOOKS_PER_ACCOUNT = 20;

/** Subscribed types as given (`*` or none: every type, now and to come); a 400 naming `param` for an unknown one. */
export function parseEventTypes(raw: readonly string[] | undefined, param = 'enabled_events'): EventType[] | null {
  if (raw === undefined) return null;
  const types = [...new Set(raw.map((t) => t.trim()))];
  // Beside `*` too: a typo in a list that also says `*` is still a typo.
  const unknown = types.filter((t) => t !== '*' && !isEventType(t));
  if (unknown.length > 0 || types.length === 0) {
    throw invalid(`unknown event type ${unknown.map((t) => `"${t}"`).join(', ')}; the types are ${EVENT_TYPES.join(', ')}`, param);
  }
  if (types.includes('*')) return null;
  return types as EventType[];
}

/** The account's endpoints, newest first (at most MAX_WEBHOOKS_PER_ACCOUNT: one Query). */
export const listWebhooks = async (accountId: string) =>
  (await accountWebhooks(accountId, MAX_WEBHOOKS_PER_ACCOUNT)).sort((a, b) => (a.id < b.id ? 1 : -1));

/** The endpoint with this id, of `accountId` when one is named: 404 otherwise, as for an id that never existed. */
export async function requireWebhook(id: string, accountId?: string): Promise<Webhook> {
  const w = accountId === undefined ? await findWebhook(id) : await getWebhook(accountId, id);
  if (!w) throw notFound('webhook endpoint', id, 'id');
  return w;
}

export async function removeWebhook(id: string, accountId?: string): Promise<Webhook> {
  const w = await requireWebhook(id, accountId);
  await deleteWebhook(w);
  return w;
}

/** A new secret; the old one keeps signing (a second signature) for ROTATION_OVERLAP_SECONDS. */
export async function rotateWebhookSecret(id: string, accountId?: string) {
  const w = await requireWebhook(id, accountId);
  const secret = newSecret();
  const until = nowSeconds() + ROTATION_OVERLAP_SECONDS;
  if (!(await rotateSecret(w, await seal(secret, { webhook: w.id }), until))) {
    throw conflict('The secret changed meanwhile (another rotation); try again', 'concurrent_update');
  }
  return { webhook: w, secret, previous_secret_signs_until: until };
}

export async function webhookDeliveries(id: string, limit = 100) {
  const w = await requireWebhook(id);
  return { webhook: w, deliveries: await recentAttempts(w, limit) };
}

/** What the admin command line shows of an endpoint: never a secret, sealed or not. */
export const describeWebhook = (w: Webhook) => ({
  webhook_id: w.id,
  url: w.url,
  events: w.events ?? [...EVENT_TYPES],
  created_at: w.created_at,
  failing_since: w.failing_since,
  disabled_at: w.disabled_at,
  disabled_reason: w.disabled_reason,
  previous_secret_signs_until: w.previous_secret && w.previous_until !== null && w.previous_until > nowSeconds() ? w.previous_until : null,
});

/** The webhook endpoint object of the API (`secret` only in the answers to create and rotate). */
export const presentWebhookEndpoint = (w: Pick<Webhook, 'id' | 'url' | 'events' | 'created_at'>, secret?: string) => ({
  id: w.id,
  url: w.url,
  enabled_events: w.events ?? ['*'],
  created_at: w.created_at,
  ...(secret === undefined ? {} : { secret }),
});
