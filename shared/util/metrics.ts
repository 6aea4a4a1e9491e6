/**
 * Business metrics as CloudWatch Embedded Metric Format lines (Powertools
 * for AWS Lambda Metrics): CloudWatch turns the JSON a function prints into
 * metrics, with no API call on the request path.
 *
 * Values are summed here during an invocation and printed once at its end
 * (`flushMetrics`, called by the invocation wrapper), so an invocation that
 * validates 100 emails prints one line, not 100. Off Lambda (the local server,
 * the tests) nothing is printed: the lines only mean something to CloudWatch.
 *
 * Powertools Metrics itself is imported by the first flush that has something
 * to print: most invocations (every read) record nothing, and a function that
 * never records a metric never loads it (docs/performance.md, "Cold start").
 */
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { MetricUnit } from '@aws-lambda-powertools/metrics/types';

export const METRICS_NAMESPACE = 'ServerlessMessaging';

/** Every metric the functions publish, with its unit; the dashboard and alarms read the same names. */
export const METRIC = {
  /** A message stored in a conversation (POST /v1/messages). */
  messagesSent: { name: 'MessagesSent', unit: 'Count' },
  /** Validations recorded, by outcome. */
  emailsValid: { name: 'EmailsValidatedValid', unit: 'Count' },
  emailsInvalid: { name: 'EmailsValidatedInvalid', unit: 'Count' },
  /** Recorded as `error` (DNS kept failing on the last attempt, or the batch was dead-lettered). */
  emailsErrored: { name: 'EmailsValidatedError', unit: 'Count' },
  /** Failed transiently and left for a retry (the queue redelivers). */
  emailsRetried: { name: 'EmailValidationRetries', unit: 'Count' },
  /** Domain lookups answered from the per-process cache, and those that went to DNS. */
  dnsCacheHits: { name: 'DnsCacheHits', unit: 'Count' },
  dnsCacheMisses: { name: 'DnsCacheMisses', unit: 'Count' },
  /** From the first email added to a list (since it was last complete) to its last email finished. */
  listCompletionTime: { name: 'ListCompletionTime', unit: 'Seconds' },
  /** Emails stored but held back because the account lacked credits (one credit each). */
  creditsHeld: { name: 'CreditsHeld', unit: 'Count' },
  /** Webhook attempts that failed (each one, retried or not), and events given up after their last attempt or a disabled endpoint. */
  webhookAttemptsFailed: { name: 'WebhookAttemptsFailed', unit: 'Count' },
  webhookEventsFailed: { name: 'WebhookEventsFailed', unit: 'Count' },
  /** The realtime authorizer could not look a token up (a refused token is not counted: it fails by design). */
  realtimeAuthorizerFailures: { name: 'RealtimeAuthorizerFailures', unit: 'Count' },
  /** A file whose last attachment went could not be deleted from the bucket (its job retries; the object stays until then). */
  fileCleanupFailed: { name: 'FileCleanupFailed', unit: 'Count' },
  /**
   * Any of the three above (an event given up, a failed token lookup, a file left behind): the one metric their
   * alarm reads, since each metric an alarm reads is billed; whoever counts one of them counts this too. Their
   * own metrics and ERROR lines tell which it was.
   */
  attentionNeeded: { name: 'AttentionNeeded', unit: 'Count' },
} as const satisfies Record<string, { name: string; unit: MetricUnit }>;

export type MetricName = keyof typeof METRIC;

// Made at the first flush with something to print on Lambda: nothing at import, and nothing at all off Lambda.
let emitter: Promise<Metrics> | undefined;
const metricsEmitter = () =>
  (emitter ??= import('@aws-lambda-powertools/metrics').then(
    ({ Metrics }) =>
      new Metrics({ namespace: METRICS_NAMESPACE, serviceName: process.env.POWERTOOLS_SERVICE_NAME || 'serverless-messaging' }),
  ));

/** Counts are summed until the flush; other units keep each value (CloudWatch computes their percentiles). */
const counts = new Map<MetricName, number>();
const samples = new Map<MetricName, number[]>();

export function countMetric(metric: MetricName, value = 1): void {
  if (value > 0) counts.set(metric, (counts.get(metric) ?? 0) + value);
}

export function recordMetric(metric: MetricName, value: number): void {
  const values = samples.get(metric) ?? [];
  // EMF holds at most 100 values per metric and line; a busier invocation keeps a bounded sample.
  if (values.length < 100) values.push(value);
  samples.set(metric, values);
}

/** What the current invocation has recorded so far (tests read it). */
export function pendingMetrics(): Record<string, number | number[]> {
  return Object.fromEntries([...counts, ...samples].map(([key, value]) => [METRIC[key].name, value]));
}

/** Prints the invocation's metrics as one EMF line on Lambda, then starts over. */
export async function flushMetrics(): Promise<void> {
  const onLambda = Boolean(process.env.AWS_LAMBDA_FUNCTION_NAME);
  // Taken before any await, so what another invocation records meanwhile waits for its own flush.
  const counted = [...counts];
  const sampled = [...samples];
  counts.clear();
  samples.clear();
  if (!onLambda || (counted.length === 0 && sampled.length === 0)) return;
  const metrics = await metricsEmitter();
  for (const [key, value] of counted) metrics.addMetric(METRIC[key].name, METRIC[key].unit, value);
  for (const [key, values] of sampled) for (const value of values) metrics.addMetric(METRIC[key].name, METRIC[key].unit, value);
  metrics.publishStoredMetrics();
}
