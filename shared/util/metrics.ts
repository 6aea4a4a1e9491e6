/**
 * Business metrics as CloudWatch Embedded Metric Format lines (Powertools
 * for AWS Lambda Metrics): CloudWatch turns the JSON a function prints into
 * metrics, with no API call on the request path.
 *
 * Values are summed here during an invocation and printed once at its end
 * (`flushMetrics`, called by the invocation wrapper), so an invocation that
 * validates 100 emails prints one line, not 100. Off Lambda (the local server,
 * the tests) nothing is printed: the lines only mean something to CloudWatch.
 */
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';

export const METRICS_NAMESPACE = 'ServerlessMessaging';

/** Every metric the functions publish, with its unit; the dashboard and alarms read the same names. */
export const METRIC = {
  /** A message stored in a conversation (POST /v1/messages). */
  messagesSent: { name: 'MessagesSent', unit: MetricUnit.Count },
  /** Validations recorded, by outcome. */
  emailsValid: { name: 'EmailsValidatedValid', unit: MetricUnit.Count },
  emailsInvalid: { name: 'EmailsValidatedInvalid', unit: MetricUnit.Count },
  /** Recorded as `error` (DNS kept failing on the last attempt, or the batch was dead-lettered). */
  emailsErrored: { name: 'EmailsValidatedError', unit: MetricUnit.Count },
  /** Failed transiently and left for a retry (the queue redelivers). */
  emailsRetried: { name: 'EmailValidationRetries', unit: MetricUnit.Count },
  /** Domain lookups answered from the per-process cache, and those that went to DNS. */
  dnsCacheHits: { name: 'DnsCacheHits', unit: MetricUnit.Count },
  dnsCacheMisses: { name: 'DnsCacheMisses', unit: MetricUnit.Count },
  /** From the first email added to a list (since it was last complete) to its last email finished. */
  listCompletionTime: { name: 'ListCompletionTime', unit: MetricUnit.Seconds },
  /** Emails stored but held back because the account lacked credits (one credit each). */
  creditsHeld: { name: 'CreditsHeld', unit: MetricUnit.Count },
} as const;

export type MetricName = keyof typeof METRIC;

// Made at the first flush on Lambda: nothing at import, and nothing at all off Lambda.
let emitter: Metrics | undefined;
const metricsEmitter = () =>
  (emitter ??= new Metrics({ namespace: METRICS_NAMESPACE, serviceName: process.env.POWERTOOLS_SERVICE_NAME || 'serverless-messaging' }));

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
export function flushMetrics(): void {
  const onLambda = Boolean(process.env.AWS_LAMBDA_FUNCTION_NAME);
  if (onLambda && (counts.size > 0 || samples.size > 0)) {
    const metrics = metricsEmitter();
    for (const [key, value] of counts) metrics.addMetric(METRIC[key].name, METRIC[key].unit, value);
    for (const [key, values] of samples) for (const value of values) metrics.addMetric(METRIC[key].name, METRIC[key].unit, value);
    metrics.publishStoredMetrics();
  }
  counts.clear();
  samples.clear();
}
