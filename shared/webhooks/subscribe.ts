import type { Hold } from '#shared/data/idempotency';
import { getWebhook, newWebhookId, putWebhookWithin, updateWebhook } from '#shared/data/webhooks';
import { conflict, invalid, notFound } from '#shared/errors';
import { derivedId, nowSeconds } from '#shared/util/ids';
import type { EventType } from '#shared/stream/event';
import { MAX_WEBHOOKS_PER_ACCOUNT, requireWebhook } from '#shared/webhooks/manage';
import { seal } from '#shared/util/sealing';
import { newSecret } from '#shared/webhooks/secrets';
import { checkWebhookUrl } from '#shared/webhooks/url-guard';

// Apart from shared/webhooks/manage.ts: only the functions that take a URL load the SSRF guard and its address policy.

async function checkedUrl(url: string, param: string): Promise<string> {
  const check = await checkWebhookUrl(url);
  if (!check.ok) throw invalid(`${param} refused: ${check.reason}`, param);
  return check.url.href;
}

/**
 * A new endpoint and its secret (shown only here). A retry of an interrupted
 * idempotent request finds the endpoint its first attempt made, and answers
 * it without the secret: nothing is created twice.
 */
export async function createWebhook(accountId: string, url: string, events: EventType[] | null, param = 'url', idempotency?: Hold) {
  const derived = idempotency ? derivedId('whk', idempotency.createdMs, idempotency.generation) : undefined;
  const earlier = derived && idempotency?.resumed ? await getWebhook(accountId, derived) : undefined;
  if (earlier) return { webhook: earlier, secret: undefined };
  const href = await checkedUrl(url, param);
  const id = derived ?? newWebhookId();
  const secret = newSecret();
  const webhook = { id, account_id: accountId, url: href, events, secret: await seal(secret, { webhook: id }), created_at: nowSeconds() };
  if (!(await putWebhookWithin(webhook, MAX_WEBHOOKS_PER_ACCOUNT))) {
    throw conflict(`The account has ${MAX_WEBHOOKS_PER_ACCOUNT} webhook endpoints already`, 'too_many_webhook_endpoints');
  }
  return { webhook, secret };
}

export async function changeWebhook(accountId: string, id: string, changes: { url?: string; events?: EventType[] | null }) {
  const w = await requireWebhook(id, accountId);
  const url = changes.url === undefined ? undefined : await checkedUrl(changes.url, 'url');
  const updated = await updateWebhook(w, { url, events: changes.events });
  if (!updated) throw notFound('webhook endpoint', id, 'id');
  return updated;
}
