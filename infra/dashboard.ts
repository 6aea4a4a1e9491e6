import { Duration, Stack } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import type { WebSocketApi, WebSocketStage } from 'aws-cdk-lib/aws-apigatewayv2';
import { AlarmStatusWidget, Dashboard, GraphWidget, MathExpression, Metric, type Alarm, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { ApiName, QueueName } from '../shared/routes.ts';
import { METRIC, METRICS_NAMESPACE, type MetricName } from '../shared/util/metrics.ts';

const ONE_MINUTE = Duration.minutes(1);
const FIVE_MINUTES = Duration.minutes(5);

export interface RealtimeStage {
  api: WebSocketApi;
  stage: WebSocketStage;
}

/** What the dashboard graphs. */
export interface DashboardSources {
  apis: Map<ApiName, RestApi>;
  /** The WebSocket API and its stage; absent where the stack has none (LocalStack). */
  realtime: RealtimeStage | undefined;
  /** Every function, by a name a person recognises (its handler, or `<api>-authorizer`). */
  functions: Map<string, IFunction>;
  queues: Record<QueueName, IQueue>;
  deadLetterQueues: Record<QueueName, IQueue>;
  /** Where Lambda puts what the stream consumers and the schedules gave up on. */
  failedInvocationsQueue: IQueue;
}

/** A figure of the WebSocket stage (API Gateway publishes them by ApiId and Stage). */
export function realtimeMetric(realtime: RealtimeStage, metricName: string): Metric {
  return new Metric({
    namespace: 'AWS/ApiGateway',
    metricName,
    dimensionsMap: { ApiId: realtime.api.apiId, Stage: realtime.stage.stageName },
    statistic: 'Sum',
    period: FIVE_MINUTES,
  });
}

/**
 * One dashboard: the APIs, the queues, every function, the business figures
 * and every alarm's state. A dashboard costs the same whatever it graphs, so
 * it shows each function apart: where an operator finds which one of an
 * alarm's family failed.
 */
export function buildDashboard(scope: Construct, props: DashboardSources, alarms: Alarm[]): Dashboard {
  const stackName = Stack.of(scope).stackName;
  const dashboard = new Dashboard(scope, 'Dashboard', { dashboardName: stackName, defaultInterval: Duration.hours(3) });
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
  const functionMetrics = (metric: (fn: IFunction) => Metric) => [...props.functions].map(([name, fn]) => metric(fn).with({ label: name }));

  const apis = [...props.apis].map(([name, api]) => {
    const stage = api.deploymentStage;
    return {
      requests: stage.metricCount({ statistic: 'Sum', period: FIVE_MINUTES, label: `${name} requests` }),
      // Metric ids are per graph: each API's expression needs its own.
      serverErrorRate: new MathExpression({
        expression: `IF(requests_${name} > 0, errors_${name} / requests_${name}, 0)`,
        usingMetrics: {
          [`errors_${name}`]: stage.metricServerError({ statistic: 'Sum', period: FIVE_MINUTES }),
          [`requests_${name}`]: stage.metricCount({ statistic: 'SampleCount', period: FIVE_MINUTES }),
        },
        label: `${name} 5xx rate`,
        period: FIVE_MINUTES,
      }),
      p99: stage.metricLatency({ statistic: 'p99', period: FIVE_MINUTES, label: `${name} p99 latency` }),
    };
  });
  dashboard.addWidgets(
    graph(
      'API requests',
      apis.map((a) => a.requests),
    ),
    graph(
      'API 5xx rate',
      apis.map((a) => a.serverErrorRate),
    ),
    graph(
      'API p99 latency (ms)',
      apis.map((a) => a.p99),
    ),
  );
  const queues = Object.entries(props.queues);
  dashboard.addWidgets(
    graph(
      'Work queue depth',
      queues.map(([name, q]) => q.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: ONE_MINUTE, label: name })),
    ),
    graph(
      'Age of oldest message (s)',
      queues.map(([name, q]) => q.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum', period: ONE_MINUTE, label: name })),
    ),
    graph('Dead-letter queue depth', [
      ...Object.entries(props.deadLetterQueues).map(([name, q]) =>
        q.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: ONE_MINUTE, label: `${name} DLQ` }),
      ),
      props.failedInvocationsQueue.metricApproximateNumberOfMessagesVisible({
        statistic: 'Maximum',
        period: ONE_MINUTE,
        label: 'failed invocations',
      }),
    ]),
  );
  dashboard.addWidgets(
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
  dashboard.addWidgets(
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
  const realtime = props.realtime;
  dashboard.addWidgets(
    graph('Credits held (emails waiting for credits)', [business('creditsHeld')], 6),
    // AttentionNeeded is what the alarm reads: the events given up and files left behind here, the authorizer's failed lookups beside.
    graph(
      'Webhook and file clean-up failures',
      [business('webhookAttemptsFailed'), business('webhookEventsFailed'), business('fileCleanupFailed'), business('attentionNeeded')],
      6,
    ),
    graph(
      'Realtime errors (authorizer lookups, not refusals; stage integration and execution)',
      [
        business('realtimeAuthorizerFailures'),
        ...(realtime
          ? [
              realtimeMetric(realtime, 'IntegrationError').with({ label: 'IntegrationError' }),
              realtimeMetric(realtime, 'ExecutionError').with({ label: 'ExecutionError' }),
            ]
          : []),
      ],
      6,
    ),
    new AlarmStatusWidget({ title: 'Alarms', alarms, width: 12, height: 8 }),
  );
  return dashboard;
}
