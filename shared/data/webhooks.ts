import * as v from 'valibot';
import { parseItem } from '#shared/db/item-schema';
import { transactNamed, txDelete, txPut, txUpdate } from '#shared/db/batch';
import { attr, condition, update } from '#shared/db/expression';
import { conditionHeld, deleteItem, getItem, putItem, putNew, query, unlessConditionFails, updateItem, type Item } from '#shared/db/items';
import { keys } from '#shared/db/keys';
import type { EventType } from '#shared/stream/event';
import type { Sealed } from '#shared/util/sealing';
import { newId, nowSeconds } from '#shared/util/ids';

export interface Webhook {
  id: string;
  account_id: string;
  url: string;
  /** Subscribed types; null means every type. */
  events: EventType[] | null;
  secret: Sealed;
  /** The secret before the last rotation, still signing until `previous_until`. */
  previous_secret: Sealed | null;
  previous_until: number | null;
  created_at: number;
  /** When the current run of failed attempts began (cleared by a success). */
  failing_since: number | null;
  disabled_at: number | null;
  disabled_reason: string | null;
}

// Built in /* @__PURE__ */ calls, so that esbuild drops them from functions that never read these items (shared/db/item-schema.ts).
const webhookItem = /* @__PURE__ */ (() =>
  v.object({
    id: v.string(),
    account_id: v.string(),
    url: v.string(),
    events: v.nullish(v.array(v.string()), null),
    secret: v.string(),
    previous_secret: v.nullish(v.string(), null),
    previous_until: v.nullish(v.number(), null),
    created_at: v.number(),
    failing_since: v.nullish(v.number(), null),
    disabled_at: v.nullish(v.number(), null),
    disabled_reason: v.nullish(v.string(), null),
  }))();

const toWebhook = (item: Item): Webhook => parseItem(webhookItem, item) as Webhook;

const webhookKey = (accountId: string, id: string) => keys.webhook.key({ acct: accountId, whk: id });

/** Reserves an id first, so the secret can be sealed with it as its context. */
export const newWebhookId = () => newId('whk');

const countKey = (accountId: string) => keys.webhookCount.key({ acct: accountId });
/** Rounds of a create whose count another create or delete changed meanwhile (each round is one transaction). */
const COUNT_TRIES = 5;

/**
 * Stores a new endpoint if the account has fewer than `max`: its put and
 * the count's increment in one transaction, conditional on the count, so
 * that creates racing each other cannot pass the limit (a count-then-put
 * let 25 creates at once make 23 endpoints where 18 were left). An account
 * whose count was never kept (its endpoints made before it was) has it set
 * first, from a Query of its endpoints. False when the account is at `max`.
 */
export async function putWebhookWithin(
  w: Omit<Webhook, 'previous_secret' | 'previous_until' | 'failing_since' | 'disabled_at' | 'disabled_reason'>,
  max: number,
): Promise<boolean> {
  const count = countKey(w.account_id);
  for (let round = 0; round < COUNT_TRIES; round++) {
    const failed = await transactNamed([
      [
        'webhook',
        txPut(
          { ...webhookKey(w.account_id, w.id), ...keys.webhookById.entry({ whk: w.id }), type: 'webhook', ...w },
          condition`attribute_not_exists(pk)`,
        ),
      ],
      ['count', txUpdate(count, update().add`endpoints ${1}`.when`endpoints < ${max}`)],
    ]);
    if (failed.length === 0) return true;
    if (failed.includes('webhook')) throw new Error(`webhook endpoint ${w.id} exists already`);
    const kept = await getItem(count, true);
    if (kept !== undefined && Number(kept.endpoints) >= max) return false;
    if (kept === undefined) {
      const existing = (await accountWebhooks(w.account_id)).length;
      await unlessConditionFails(putItem({ ...count, type: 'webhook_count', endpoints: existing }, condition`attribute_not_exists(pk)`));
    }
  }
  throw new Error("the account's webhook endpoint count kept changing");
}

/** An account's endpoints (strongly consistent: a new subscription sees the next change). */
export async function accountWebhooks(accountId: string, limit = 100): Promise<Webhook[]> {
  return (await query({ partition: keys.webhook.partition({ acct: accountId }) }, limit)).map(toWebhook);
}

export async function findWebhook(id: string): Promise<Webhook | undefined> {
  const [entry] = await query({ index: keys.webhookById.index, partition: keys.webhookById.partition({ whk: id }) }, 1);
  return entry ? toWebhook(entry) : undefined;
}

/** An account's endpoint by id: one consistent read of its own key. */
export async function getWebhook(accountId: string, id: string): Promise<Webhook | undefined> {
  const item = await getItem(webhookKey(accountId, id), true);
  return item ? toWebhook(item) : undefined;
}

/** Deletes the endpoint and, when the account's count is kept, takes it from the count in the same transaction. */
export async function deleteWebhook(w: Pick<Webhook, 'account_id' | 'id'>): Promise<void> {
  const failed = await transactNamed([
    ['webhook', txDelete(webhookKey(w.account_id, w.id), condition`attribute_exists(pk)`)],
    ['count', txUpdate(countKey(w.account_id), update().add`endpoints ${-1}`.when`attribute_exists(endpoints)`)],
  ]);
  // No count kept yet (endpoints from before it): the endpoint alone. Gone already: nothing to take from the count.
  if (failed.length === 1 && failed[0] === 'count') await deleteItem(webhookKey(w.account_id, w.id));
}

/** Changes an endpoint's URL and subscribed types (null: every type); undefined when it is gone. */
export async function updateWebhook(
  w: Pick<Webhook, 'account_id' | 'id'>,
  changes: { url?: string; events?: EventType[] | null },
): Promise<Webhook | undefined> {
  const write = update().when`attribute_exists(pk)`;
  if (changes.url !== undefined) write.set`${attr('url')} = ${changes.url}`;
  if (changes.events !== undefined) write.set`events = ${changes.events}`;
  const out = await unlessConditionFails(updateItem(webhookKey(w.account_id, w.id), write, 'ALL_NEW'));
  return out ? toWebhook(out) : undefined;
}

/** The new secret signs from now on; the old one also signs until `until`. */
export async function rotateSecret(w: Webhook, sealed: Sealed, until: number): Promise<boolean> {
  const changes = update().set`secret = ${sealed}, previous_secret = ${w.secret}, previous_until = ${until}`.when`secret = ${w.secret}`;
  return conditionHeld(updateItem(webhookKey(w.account_id, w.id), changes));
}

/** A success ends a run of failures (and re-enables nothing: a disabled endpoint is not attempted). */
export async function markSucceeded(w: Webhook): Promise<void> {
  if (w.failing_since === null) return;
  await updateItem(webhookKey(w.account_id, w.id), update().remove`failing_since`.when`attribute_exists(pk)`).catch(() => undefined);
}

/** Starts (or continues) a run of failures; resolves to when the run began. */
export async function markFailing(w: Webhook, at: number): Promise<number> {
  const out = await updateItem(
    webhookKey(w.account_id, w.id),
    update().set`failing_since = if_not_exists(failing_since, ${at})`.when`attribute_exists(pk)`,
    'ALL_NEW',
  );
  return Number(out.failing_since ?? at);
}

export async function disableWebhook(w: Webhook, reason: string): Promise<void> {
  await updateItem(
    webhookKey(w.account_id, w.id),
    update().set`disabled_at = if_not_exists(disabled_at, ${nowSeconds()}), disabled_reason = ${reason}`.when`attribute_exists(pk)`,
  );
}

export interface Attempt {
  event_id: string;
  type: string;
  attempt: number;
  at_ms: number;
  /** `succeeded`, `retrying` (another attempt is scheduled) or `failed` (no more attempts). */
  outcome: 'succeeded' | 'retrying' | 'failed';
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

/** Attempts are kept 30 days (TTL). */
const ATTEMPT_DAYS = 30;

export async function recordAttempt(w: Pick<Webhook, 'account_id' | 'id'>, a: Attempt): Promise<void> {
  await putNew({
    ...keys.webhookAttempt.key({ acct: w.account_id, whk: w.id, ms: a.at_ms, evt: a.event_id, attempt: a.attempt }),
    ...a,
    type: 'webhook_attempt',
    event_type: a.type,
    expires_at: Math.floor(a.at_ms / 1000) + ATTEMPT_DAYS * 86_400,
  });
}

/** The most recent attempts, newest first. */
export async function recentAttempts(w: Pick<Webhook, 'account_id' | 'id'>, limit = 100): Promise<Attempt[]> {
  const items = await query({ partition: keys.webhookAttempt.partition({ acct: w.account_id, whk: w.id }), forward: false }, limit);
  return items.map(({ event_id, event_type: type, attempt, at_ms, outcome, status_code, error, duration_ms }) => ({
    event_id,
    type,
    attempt,
    at_ms,
    outcome,
    status_code: status_code ?? null,
    error: error ?? null,
    duration_ms,
  })) as Attempt[];
}
