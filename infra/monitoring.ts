import { Annotations, Duration, Stack } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  MathExpression,
  Metric,
  TreatMissingData,
  type Dashboard,
  type IMetric,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic, type ITopic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { METRIC, METRICS_NAMESPACE } from '../shared/util/metrics.ts';
import { workers, type ApiName, type QueueName } from '../shared/routes.ts';
import { buildDashboard, realtimeMetric, type DashboardSources } from './dashboard.ts';
import type { DeploySettings } from './settings.ts';

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
  /** p99 latency over 5 minutes, in 3 of 3 periods. */
  p99LatencyMs: { messaging: 1000, email: 3000 } satisfies Record<ApiName, number>,
};

const ONE_MINUTE = Duration.minutes(1);
const FIVE_MINUTES = Duration.minutes(5);

export interface MonitoringProps extends DashboardSources {
  /** The change stream's consumers, by name. */
  streamFunctions: Map<string, IFunction>;
  settings: DeploySettings;
}

/**
 * The alarms, the notification topic they report to (when configured), and,
 * when asked for (`-c dashboard=true`), one dashboard with the same figures.
 *
 * CloudWatch bills an alarm per metric it reads (a metric-math alarm over ten
 * functions costs ten), so the alarms watch where failures end up, not each
 * function: a REST function that fails, times out or is throttled is a 5xx
 * of its API; a worker's, a message on its queue's dead-letter queue or an
 * old message on its queue; a stream consumer's, its iterator age and the
 * failed-invocations queue; a schedule's, that queue (its failure
 * destination); a realtime route's, an error of the WebSocket stage. Adding a
 * function to one of these adds no alarm (docs/operations.md, Alarms).
 */
export class Monitoring extends Construct {
  readonly alarms: Alarm[] = [];
  readonly topic: ITopic | undefined;
  /** With `-c dashboard=true` only. */
  readonly dashboard: Dashboard | undefined;

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
    const custom = (key: 'attentionNeeded') =>
      new Metric({
        namespace: METRICS_NAMESPACE,
        metricName: METRIC[key].name,
        dimensionsMap: { service: stackName },
        statistic: 'Sum',
        period: FIVE_MINUTES,
      });

    // A queue family: its work stuck (the queue's oldest message) or given up (its dead-letter queue), one alarm.
    for (const [name, queue] of Object.entries(props.queues) as [QueueName, IQueue][]) {
      const dlq = props.deadLetterQueues[name];
      // A worker drains this dead-letter queue within seconds, often between two samples of its depth:
      // its receives count each arrival instead (SQS does not count redriven messages as sent).
      const drained = workers.some((w) => w.deadLetters && w.queue === name);
      const deadLetters = drained
        ? dlq.metricNumberOfMessagesReceived({ statistic: 'Sum', period: ONE_MINUTE })
        : dlq.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: ONE_MINUTE });
      const limit = THRESHOLDS.queueAgeSeconds[name];
      alarm(
        `${name}-queue`,
        new MathExpression({
          expression: `FILL(dead_${name}, 0) + IF(FILL(age_${name}, 0) > ${limit}, 1, 0)`,
          usingMetrics: {
            [`dead_${name}`]: deadLetters,
            [`age_${name}`]: queue.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum', period: ONE_MINUTE }),
          },
          label: `${name} dead letters (+1 when stuck)`,
          period: ONE_MINUTE,
        }),
        0,
        `A message reached the ${name} dead-letter queue, or the oldest message on the ${name} queue is older than ${limit} s.`,
      );
    }

    // The change stream: consumers falling behind, and what Lambda gave up on (stream batches, scheduled runs).
    for (const [name, fn] of props.streamFunctions) {
      alarm(
        `${name}-iterator-age`,
        fn.metric('IteratorAge', { statistic: 'Maximum', period: ONE_MINUTE }),
        THRESHOLDS.streamIteratorAgeMs,
        `The ${name} stream consumer is more than ${THRESHOLDS.streamIteratorAgeMs / 1000} s behind the table's changes.`,
        [3, 3],
      );
    }
    alarm(
      'failed-invocations',
      props.failedInvocationsQueue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: ONE_MINUTE }),
      0,
      'A change-stream batch kept failing (its events were not published), or a scheduled run failed.',
    );
    alarm(
      'attention-needed',
      custom('attentionNeeded'),
      0,
      'The realtime authorizer could not look a token up (handshakes answered 500), a webhook event was given up after its last attempt or an endpoint disabled after 3 days of failures, or a file could not be deleted after its last attachment went.',
    );

    // APIs: any answer 5xx (a handler's unexpected error, its authorizer failing, Lambda failing, timing out or throttling), and tail latency.
    for (const [name, api] of props.apis) {
      const stage = api.deploymentStage;
      alarm(
        `${name}-api-5xx`,
        stage.metricServerError({ statistic: 'Sum', period: FIVE_MINUTES }),
        0,
        `The ${name} API answered 5xx: a function failed, timed out or was throttled.`,
      );
      alarm(
        `${name}-api-p99-latency`,
        stage.metricLatency({ statistic: 'p99', period: FIVE_MINUTES }),
        THRESHOLDS.p99LatencyMs[name],
        `${name} API p99 latency above ${THRESHOLDS.p99LatencyMs[name]} ms.`,
        [3, 3],
      );
    }
    if (props.realtime) {
      alarm(
        'realtime-api-errors',
        new MathExpression({
          expression: 'FILL(integration, 0) + FILL(execution, 0)',
          usingMetrics: {
            integration: realtimeMetric(props.realtime, 'IntegrationError'),
            execution: realtimeMetric(props.realtime, 'ExecutionError'),
          },
          label: 'realtime integration and execution errors',
          period: FIVE_MINUTES,
        }),
        0,
        'A realtime route function failed, timed out or was throttled.',
      );
    }

    this.dashboard = props.settings.dashboard ? buildDashboard(this, props, this.alarms) : undefined;
  }

  /** An existing topic (`-c alarmTopicArn=...`), a new one with an e-mail subscription (`-c alarmEmail=...`), or none. */
  private notificationTopic(settings: DeploySettings): ITopic | undefined {
    if (settings.alarmTopicArn) return Topic.fromTopicArn(this, 'AlarmTopic', settings.alarmTopicArn);
    if (!settings.alarmEmail) {
      // Alarms with no action change state in the console and page nobody: say so at every synth of a real deployment.
      if (settings.target === 'aws') {
        Annotations.of(Stack.of(this)).addWarningV2(
          'serverless-messaging:alarms-notify-nobody',
          `The stack's alarms notify nobody: deploy with -c alarmEmail=<address> or -c alarmTopicArn=<SNS topic ARN>.`,
        );
      }
      return undefined;
    }
    const topic = new Topic(this, 'AlarmTopic', { displayName: `${Stack.of(this).stackName} alarms`, enforceSSL: true });
    topic.addSubscription(new EmailSubscription(settings.alarmEmail));
    return topic;
  }
}
