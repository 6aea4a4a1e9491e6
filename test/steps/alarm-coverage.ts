import { isDeepStrictEqual } from 'node:util';
import type { Template } from 'aws-cdk-lib/assertions';

// CloudFormation JSON, read by assertions: `any` keeps them short.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Cfn = any;
type Resources = Record<string, { Type: string; Properties: Cfn }>;

export interface AlarmMetric {
  Namespace: string;
  MetricName: string;
  Dimensions: { Name: string; Value: unknown }[];
}

/** The metrics an alarm reads: its one metric, or each metric of its metric-math expression. */
export function alarmMetrics(alarm: Cfn): AlarmMetric[] {
  if (alarm.Metrics) {
    return alarm.Metrics.filter((m: Cfn) => m.MetricStat).map((m: Cfn) => ({ Dimensions: [], ...m.MetricStat.Metric }));
  }
  return [{ Namespace: alarm.Namespace, MetricName: alarm.MetricName, Dimensions: alarm.Dimensions ?? [] }];
}

/** CloudWatch bills a standard alarm per metric it reads, a metric-math alarm for every metric of its expression. */
export function billedAlarmMetrics(template: Template): number {
  return Object.values(template.findResources('AWS::CloudWatch::Alarm')).reduce((n, a) => n + alarmMetrics(a.Properties).length, 0);
}

/**
 * Alarm metrics an idle month can afford within $5 (issue 35): the KMS key
 * is $1.00, the sweeper's runs about $0.02, each alarm metric $0.10, and the
 * dashboard, when asked for, $3.00 more.
 */
export const ALARM_METRIC_BUDGET = 19;

/**
 * What no alarm would report failing, from the template's own wiring: each
 * function by whatever invokes it (its REST API's 5xx, its WebSocket stage's
 * errors, its queue family, its stream iterator age and failure destination,
 * a schedule's failure destination), then every queue. A function that
 * nothing invokes is unwatched too, so a new kind of function fails here
 * until its failures reach an alarm.
 */
export function unwatched(template: Template): string[] {
  const resources = template.toJSON().Resources as Resources;
  const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
  const mentions = (value: unknown, id: string) => JSON.stringify(value ?? null).includes(`"${id}"`);
  const metrics = ofType('AWS::CloudWatch::Alarm').flatMap(([, a]) => alarmMetrics(a.Properties));
  const watched = (metricName: string, dimension: { Name: string; Value: unknown }) =>
    metrics.some((m) => m.MetricName === metricName && m.Dimensions.some((d) => isDeepStrictEqual(d, dimension)));
  const queueWatched = (queue: string | undefined) =>
    queue !== undefined &&
    metrics.some(
      (m) => m.Namespace === 'AWS/SQS' && m.Dimensions.some((d) => isDeepStrictEqual(d.Value, { 'Fn::GetAtt': [queue, 'QueueName'] })),
    );
  const familyWatched = (queue: string) => {
    const deadLetters = resources[queue]?.Properties.RedrivePolicy?.deadLetterTargetArn['Fn::GetAtt'][0];
    return queueWatched(queue) && (deadLetters === undefined || queueWatched(deadLetters));
  };
  const restWatched = (api: string) => watched('5XXError', { Name: 'ApiName', Value: resources[api]!.Properties.Name });
  const stageWatched = (api: string) =>
    ['IntegrationError', 'ExecutionError'].every((name) => watched(name, { Name: 'ApiId', Value: { Ref: api } }));
  const destination = (config: Cfn) => config?.OnFailure?.Destination?.['Fn::GetAtt']?.[0] as string | undefined;

  const covered = (fn: string): boolean => {
    const ways: boolean[] = [];
    for (const [, m] of ofType('AWS::ApiGateway::Method'))
      if (mentions(m.Properties.Integration?.Uri, fn)) ways.push(restWatched(m.Properties.RestApiId.Ref));
    for (const [, a] of ofType('AWS::ApiGateway::Authorizer'))
      if (mentions(a.Properties.AuthorizerUri, fn)) ways.push(restWatched(a.Properties.RestApiId.Ref));
    for (const [, i] of ofType('AWS::ApiGatewayV2::Integration'))
      if (mentions(i.Properties.IntegrationUri, fn)) ways.push(stageWatched(i.Properties.ApiId.Ref));
    for (const [, a] of ofType('AWS::ApiGatewayV2::Authorizer'))
      if (mentions(a.Properties.AuthorizerUri, fn)) ways.push(stageWatched(a.Properties.ApiId.Ref));
    for (const [, e] of ofType('AWS::Lambda::EventSourceMapping')) {
      if (e.Properties.FunctionName.Ref !== fn) continue;
      const [source, attribute] = e.Properties.EventSourceArn['Fn::GetAtt'];
      ways.push(
        attribute === 'StreamArn'
          ? watched('IteratorAge', { Name: 'FunctionName', Value: { Ref: fn } }) &&
              queueWatched(destination(e.Properties.DestinationConfig))
          : familyWatched(source),
      );
    }
    const scheduled = ofType('AWS::Events::Rule').some(([, r]) => mentions(r.Properties.Targets, fn));
    const asyncConfig = ofType('AWS::Lambda::EventInvokeConfig').find(([, c]) => c.Properties.FunctionName.Ref === fn);
    if (scheduled || asyncConfig) ways.push(queueWatched(destination(asyncConfig?.[1].Properties.DestinationConfig)));
    return ways.length > 0 && ways.every(Boolean);
  };

  return [
    ...ofType('AWS::Lambda::Function')
      .map(([id]) => id)
      .filter((id) => !covered(id)),
    ...ofType('AWS::SQS::Queue')
      .map(([id]) => id)
      .filter((id) => !queueWatched(id))
      .map((id) => `queue ${id}`),
  ];
}
