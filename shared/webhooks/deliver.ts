import * as v from 'valibot';
import { disableWebhook, findWebhook, markFailing, markSucceeded, recordAttempt, type Webhook } from '#shared/data/webhooks';
import { eventWithFileUrls } from '#shared/files/urls';
import { logger } from '#shared/util/logger';
import { parseMessage } from '#shared/util/message-schema';
import { countMetric } from '#shared/util/metrics';
import { sendJson } from '#shared/util/sqs';
import { DISABLE_AFTER_SECONDS, retrySchedule } from '#shared/webhooks/timing';
import { postJson } from '#shared/webhooks/post';
import { webhooksQueueUrl, type DeliveryJob } from '#shared/webhooks/publish';
import { open } from '#shared/util/sealing';
import { signatureHeaders } from '#shared/webhooks/signing';
import { checkWebhookUrl } from '#shared/webhooks/url-guard';

const jobSchema = /* @__PURE__ */ (() =>
  v.object({
    webhook_id: v.string(),
    account_id: v.string(),
    event: v.object({
      id: v.string(),
      type: v.string(),
      created_at: v.number(),
      user: v.optional(v.string()),
      data: v.object({ object: v.unknown() }),
    }),
    attempt: v.pipe(v.number(), v.integer(), v.minValue(1)),
    first_ms: v.optional(v.number()),
    not_before_ms: v.optional(v.number()),
  }))();

export const parseDeliveryJob = (body: string) => parseMessage(jobSchema, body) as DeliveryJob | undefined;

/** SQS delays a message at most 15 minutes; a longer wait is several sends of the same job. */
const MAX_DELAY_SECONDS = 900;

async function sendLater(job: DeliveryJob, notBeforeMs: number): Promise<void> {
  const delay = Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil((notBeforeMs - Date.now()) / 1000)));
  await sendJson(webhooksQueueUrl(), { ...job, not_before_ms: notBeforeMs }, delay);
}

/** Decrypted secrets, per endpoint and sealed value, for the container's life (a rotation changes the sealed value). */
const secrets = new Map<string, Promise<string>>();
const secretOf = (w: Webhook, sealed: string) => {
  const key = `${w.id}:${sealed}`;
  let plain = secrets.get(key);
  if (!plain) secrets.set(key, (plain = open(sealed, { webhook: w.id })));
  plain.catch(() => secrets.delete(key));
  return plain;
};

/** The secrets that sign now: the current one, and the previous one during a rotation's overlap. */
async function signingSecrets(w: Webhook, nowSeconds: number): Promise<string[]> {
  const current = await secretOf(w, w.secret);
  if (w.previous_secret && w.previous_until !== null && w.previous_until > nowSeconds)
    return [current, await secretOf(w, w.previous_secret)];
  return [current];
}

export type Outcome = 'succeeded' | 'retrying' | 'failed' | 'waiting' | 'dropped';

/**
 * One delivery job: wait if it is not due yet, else one attempt, recorded,
 * then on failure the next attempt of the retry schedule (about 5 s, 30 s,
 * 2 min, 15 min, 1 h, 4 h, 12 h and 24 h after the first attempt), or the event given up. The event's id
 * is the `webhook-id` of every attempt. An endpoint whose failures have
 * lasted DISABLE_AFTER_SECONDS is disabled (and logged as an error, which
 * the delivery-failure alarm counts).
 */
export async function deliver(job: DeliveryJob): Promise<Outcome> {
  if (job.not_before_ms !== undefined && job.not_before_ms > Date.now() + 500) {
    await sendLater(job, job.not_before_ms);
    return 'waiting';
  }
  const w = await findWebhook(job.webhook_id);
  if (!w || w.account_id !== job.account_id || w.disabled_at !== null) return 'dropped';

  const startedMs = Date.now();
  const firstMs = job.first_ms ?? startedMs;
  const timestamp = Math.floor(startedMs / 1000);
  // Files' download URLs are made for this attempt: a retry days later gets URLs that work.
  const body = JSON.stringify(await eventWithFileUrls(job.account_id, job.event));
  const target = await checkWebhookUrl(w.url);
  const result = target.ok
    ? await postJson(target, signatureHeaders(await signingSecrets(w, timestamp), job.event.id, timestamp, body), body)
    : { statusCode: null, error: `refused by the SSRF guard: ${target.reason}` };
  const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;

  const schedule = retrySchedule();
  const next = schedule[job.attempt - 1];
  const outcome: Outcome = ok ? 'succeeded' : next === undefined ? 'failed' : 'retrying';
  await recordAttempt(w, {
    event_id: job.event.id,
    type: job.event.type,
    attempt: job.attempt,
    at_ms: startedMs,
    outcome,
    status_code: result.statusCode,
    error: ok ? null : (result.error ?? `answered ${result.statusCode}`),
    duration_ms: Date.now() - startedMs,
  });
  if (ok) {
    await markSucceeded(w);
    return outcome;
  }

  countMetric('webhookAttemptsFailed');
  const failingSince = await markFailing(w, timestamp);
  if (timestamp - failingSince >= DISABLE_AFTER_SECONDS) {
    await disableWebhook(w, `every attempt failed for ${Math.round((timestamp - failingSince) / 3600)} hours`);
    countMetric('webhookEventsFailed');
    countMetric('attentionNeeded');
    logger.error('webhook endpoint disabled after failing for 3 days', { webhook_id: w.id, account_id: w.account_id });
    return 'failed';
  }
  if (outcome === 'failed') {
    countMetric('webhookEventsFailed');
    countMetric('attentionNeeded');
    logger.error('webhook event given up after its last attempt', { webhook_id: w.id, event_id: job.event.id, attempts: job.attempt });
    return outcome;
  }
  await sendLater({ ...job, attempt: job.attempt + 1, first_ms: firstMs }, firstMs + next! * 1000);
  return outcome;
}
