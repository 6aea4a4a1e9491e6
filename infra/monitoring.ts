import { Duration, Stack } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  MathExpression,
  Metric,
  TreatMissingData,
  type IMetric,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic, type ITopic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { METRIC, METRICS_NAMESPACE, type MetricName } from '../shared/util/metrics.ts';
import { workers, type ApiName, type QueueName } from '../shared/routes.ts';
import type { DeploySettings } from './settings.ts';

/** Functions whose failure is how they answer no: the realtime `$connect` authorizer (docs/realtime.md). */
export const REFUSES_BY_FAILING = new Set(['realtime-authorizer']);

/**
 * Thresholds of the alarms; docs/operations.md says what each alarm means
 * and what to do about it. Latency targets follow what each API does: the
 * messaging API answers from one or two reads, the email API may validate
 * inline for up to 2.5 s before it answers.
 */
export const THRESHOLDS = {
  /** Age of the oldest message on a work queue: longer than two visibility timeouts means it is stuck or retried again and again. */
  queueAgeSeconds: { purge: 900, validation: 900, delivery: 900, webhooks: 1800 } satisfies Record<QueueName, number>,
  /** Age of the newest record a stream consumer read, ms: events reach endpoints this much later than their commit. */
  streamIteratorAgeMs: 60_000,
  /** Share of requests answered 5xx over 5 minutes, in 2 of 3 periods. */
  serverErrorRate: 0.01,
  /** p99 latency over 5 minutes, in 3 of 3 periods. */
  p99LatencyMs: { messaging: 1000, email: 3000 } satisfies Record<ApiName, number>,
};

const FIVE_MINUTES = Duration.minutes(5);

export interface MonitoringProps {
  apis: Map<ApiName, RestApi>;
  /** Every function, by a name a person recognises (its handler, or `<api>-authorizer`). */
  functions: Map<string, IFunction>;
  queues: Record<QueueName, IQueue>;
  deadLetterQueues: Record<QueueName, IQueue>;
  /** The change stream's consumers, by name, and where the records they keep failing on go. */
  streamFunctions: Map<string, IFunction>;
  streamDeadLetterQueue: IQueue;
  settings: DeploySettings;
}

/** The alarms, the notification topic they report to (when configured), and one dashboard with the same figures. */
export class Monitoring extends Construct {
  readonly alarms: Alarm[] = [];
  readonly topic: ITopic | undefined;
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    const stackName = Stack.of(this).stackName;
    this.topic = this.notificationTopic(props.settings);

    const alarm = (name: string, metric: IMetric, threshold: number, description: string, periods: [number, number] = [1, 1]) => {
      const created = new Alarm(this, `${name.replace(/[^A-Za-z0-9]/g, '')}Alarm`, {
        alarmName: `${stackName}-${name}`,
        alarmDescription: `${description} See docs/operations.md#alarms.`,
        metric,
        threshold,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: periods[1],
        datapointsToAlarm: periods[0],
        // No traffic is not a problem: quiet periods must not alarm.
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      if (this.topic) {
        created.addAlarmAction(new SnsAction(this.topic));
        created.addOkAction(new SnsAction(this.topic));
      }
      this.alarms.push(created);
      return created;
    };

    // Queues: anything dead-lettered, and work that stopped moving. A worker may
    // drain a dead-letter queue between two samples of its depth, so for those its
    // receives count too (SQS does not count redriven messages as sent).
    for (const [name, dlq] of Object.entries(props.deadLetterQueues) as [QueueName, IQueue][]) {
      const depth = dlq.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: Duration.minutes(1) });
      const consumed = workers.some((w) => w.deadLetters && w.queue === name);
      const metric = consumed
        ? new MathExpression({
            expression: `depth_${name} + received_${name}`,
            usingMetrics: {
              [`depth_${name}`]: depth,
              [`received_${name}`]: dlq.metricNumberOfMessagesReceived({ statistic: 'Sum', period: Duration.minutes(1) }),
            },
            label: `${name} dead letters`,
            period: Duration.minutes(1),
          })
        : depth;
      alarm(`${name}-dead-letters`, metric, 0, `Messages reached the ${name} dead-letter queue.`);
    }
    for (const [name, queue] of Object.entries(props.queues) as [QueueName, IQueue][]) {
      alarm(
        `${name}-queue-age`,
        queue.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum', period: FIVE_MINUTES }),
        THRESHOLDS.queueAgeSeconds[name],
        `Oldest message on the ${name} queue older than ${THRESHOLDS.queueAgeSeconds[name]} s.`,
      );
    }

    // The change stream: consumers falling behind, records given up, and webhook events that could not be delivered.
    for (const [name, fn] of props.streamFunctions) {
      alarm(
        `${name}-iterator-age`,
        fn.metric('IteratorAge', { statistic: 'Maximum', period: Duration.minutes(1) }),
        THRESHOLDS.streamIteratorAgeMs,
        `The ${name} stream consumer is more than ${THRESHOLDS.streamIteratorAgeMs / 1000} s behind the table's changes.`,
        [3, 3],
      );
    }
    alarm(
      'stream-dead-letters',
      props.streamDeadLetterQueue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: Duration.minutes(1) }),
      0,
      'A change-stream batch kept failing: its events were not published.',
    );
    alarm(
      'realtime-authorizer-failures',
      new Metric({
        namespace: METRICS_NAMESPACE,
        metricName: METRIC.realtimeAuthorizerFailures.name,
        dimensionsMap: { service: stackName },
        statistic: 'Sum',
        period: FIVE_MINUTES,
      }),
      0,
      'The realtime authorizer could not look a token up: handshakes are answered 500.',
    );
    alarm(
      'webhook-delivery-failures',
      new Metric({
        namespace: METRICS_NAMESPACE,
        metricName: METRIC.webhookEventsFailed.name,
        dimensionsMap: { service: stackName },
        statistic: 'Sum',
        period: FIVE_MINUTES,
      }),
      0,
      'A webhook event was given up after its last attempt, or an endpoint was disabled after 3 days of failures.',
    );

    // APIs: error rate and tail latency, per API.
    const apiFigures = [...props.apis].map(([name, api]) => {
      const stage = api.deploymentStage;
      const requests = stage.metricCount({ statistic: 'SampleCount', period: FIVE_MINUTES });
      // Metric ids are per graph: each API's expression needs its own.
      const serverErrorRate = new MathExpression({
        expression: `IF(requests_${name} > 0, errors_${name} / requests_${name}, 0)`,
        usingMetrics: {
          [`errors_${name}`]: stage.metricServerError({ statistic: 'Sum', period: FIVE_MINUTES }),
          [`requests_${name}`]: requests,
        },
        label: `${name} 5xx rate`,
        period: FIVE_MINUTES,
      });
      const p99 = stage.metricLatency({ statistic: 'p99', period: FIVE_MINUTES, label: `${name} p99 latency` });
      alarm(
        `${name}-api-5xx-rate`,
        serverErrorRate,
        THRESHOLDS.serverErrorRate,
        `More than ${THRESHOLDS.serverErrorRate * 100}% of ${name} API requests answered 5xx.`,
        [2, 3],
      );
      alarm(
        `${name}-api-p99-latency`,
        p99,
        THRESHOLDS.p99LatencyMs[name],
        `${name} API p99 latency above ${THRESHOLDS.p99LatencyMs[name]} ms.`,
        [3, 3],
      );
      return {
        name,
        requests: stage.metricCount({ statistic: 'Sum', period: FIVE_MINUTES, label: `${name} requests` }),
        serverErrorRate,
        p99,
      };
    });

    // Functions: uncaught errors (a handler's own error answers are responses, not errors) and throttles.
    for (const [name, fn] of props.functions) {
      // The realtime authorizer refuses a handshake by failing ("Unauthorized" is API Gateway's only way to a 401):
      // its errors are mostly refusals, so its real failures are counted as a metric of their own (alarmed above).
      if (!REFUSES_BY_FAILING.has(name))
        alarm(`${name}-errors`, fn.metricErrors({ statistic: 'Sum', period: FIVE_MINUTES }), 0, `Function ${name} failed.`);
      alarm(`${name}-throttles`, fn.metricThrottles({ statistic: 'Sum', period: FIVE_MINUTES }), 0, `Function ${name} was throttled.`);
    }

    this.dashboard = new Dashboard(this, 'Dashboard', { dashboardName: stackName, defaultInterval: Duration.hours(3) });
    const business = (key: MetricName, statistic = 'Sum') =>
      new Metric({
        namespace: METRICS_NAMESPACE,
        metricName: METRIC[key].name,
        dimensionsMap: { service: stackName },
        statistic,
        period: FIVE_MINUTES,
        label: METRIC[key].name,
      });
    const graph = (title: string, left: IMetric[], width = 8) => new GraphWidget({ title, left, width, height: 6 });
    const functionMetrics = (metric: (fn: IFunction) => Metric) =>
      [...props.functions].map(([name, fn]) => metric(fn).with({ label: name }));

    this.dashboard.addWidgets(
      graph(
        'API requests',
        apiFigures.map((a) => a.requests),
      ),
      graph(
        'API 5xx rate',
        apiFigures.map((a) => a.serverErrorRate),
      ),
      graph(
        'API p99 latency (ms)',
        apiFigures.map((a) => a.p99),
      ),
    );
    this.dashboard.addWidgets(
      graph(
        'Work queue depth',
        Object.entries(props.queues).map(([name, q]) =>
          q.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: Duration.minutes(1), label: name }),
        ),
      ),
      graph(
        'Age of oldest message (s)',
        Object.entries(props.queues).map(([name, q]) =>
          q.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum', period: Duration.minutes(1), label: name }),
        ),
      ),
      graph(
        'Dead-letter queue depth',
        Object.entries(props.deadLetterQueues).map(([name, q]) =>
          q.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: Duration.minutes(1), label: `${name} DLQ` }),
        ),
      ),
    );
    this.dashboard.addWidgets(
      graph(
        'Function errors',
        functionMetrics((fn) => fn.metricErrors({ statistic: 'Sum', period: FIVE_MINUTES })),
        12,
      ),
      graph(
        'Function throttles',
        functionMetrics((fn) => fn.metricThrottles({ statistic: 'Sum', period: FIVE_MINUTES })),
        12,
      ),
    );
    const hits = business('dnsCacheHits');
    const misses = business('dnsCacheMisses');
    this.dashboard.addWidgets(
      graph('Messages sent', [business('messagesSent')], 6),
      graph(
        'Emails validated, by outcome',
        [business('emailsValid'), business('emailsInvalid'), business('emailsErrored'), business('emailsRetried')],
        6,
      ),
      graph(
        'DNS cache hit ratio (%)',
        [
          new MathExpression({
            expression: 'IF(hits + misses > 0, 100 * hits / (hits + misses), 0)',
            usingMetrics: { hits, misses },
            label: 'hit ratio',
            period: FIVE_MINUTES,
          }),
        ],
        6,
      ),
      graph(
        'List completion time (s)',
        [
          business('listCompletionTime', 'p50').with({ label: 'p50' }),
          business('listCompletionTime', 'p90').with({ label: 'p90' }),
          business('listCompletionTime', 'Maximum').with({ label: 'max' }),
        ],
        6,
      ),
    );
    this.dashboard.addWidgets(
      graph('Credits held (emails waiting for credits)', [business('creditsHeld')], 6),
      graph('Webhook failures', [business('webhookAttemptsFailed'), business('webhookEventsFailed')], 6),
      graph('Realtime authorizer failures (token lookups, not refusals)', [business('realtimeAuthorizerFailures')], 6),
      new AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 12, height: 8 }),
    );
  }

  /** An existing topic (`-c alarmTopicArn=...`), a new one with an e-mail subscription (`-c alarmEmail=...`), or none. */
  private notificationTopic(settings: DeploySettings): ITopic | undefined {
    if (settings.alarmTopicArn) return Topic.fromTopicArn(this, 'AlarmTopic', settings.alarmTopicArn);
    if (!settings.alarmEmail) return undefined;
    const topic = new Topic(this, 'AlarmTopic', { displayName: `${Stack.of(this).stackName} alarms`, enforceSSL: true });
    topic.addSubscription(new EmailSubscription(settings.alarmEmail));
    return topic;
  }
}
