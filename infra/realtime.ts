import { CfnOutput, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { LogGroupLogDestination, WebSocketApi, WebSocketStage } from 'aws-cdk-lib/aws-apigatewayv2';
import { WebSocketLambdaAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { WebSocketLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { Function as Lambda } from 'aws-cdk-lib/aws-lambda';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { Construct, IDependable } from 'constructs';
import { realtime, STAGE_NAME, type RealtimeRoute } from '../shared/routes.ts';
import { createFunction, LOG_RETENTION, pascalCase, type FunctionDeps } from './functions.ts';

export interface BuiltRealtime {
  api: WebSocketApi;
  stage: WebSocketStage;
  authorizerFunction: Lambda;
  routeFunctions: Map<RealtimeRoute, Lambda>;
  accessLogs: LogGroup;
}

/** One JSON object per connect, message and disconnect in the stage's access log (docs/operations.md). */
const ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  connectionId: '$context.connectionId',
  routeKey: '$context.routeKey',
  eventType: '$context.eventType',
  status: '$context.status',
  accountId: '$context.authorizer.accountId',
  authorizerError: '$context.authorizer.error',
  integrationLatencyMs: '$context.integrationLatency',
  requestTime: '$context.requestTime',
};

/**
 * The realtime WebSocket API (docs/realtime.md): one Lambda per route of
 * `realtime` in the route table, the REQUEST authorizer on `$connect`, one
 * stage, and the stack output `RealtimeUrl`. Not built for LocalStack,
 * whose free edition has no WebSocket APIs (docs/deploying.md).
 */
export function buildRealtime(scope: Construct, deps: FunctionDeps, logsRole?: IDependable): BuiltRealtime {
  const stack = Stack.of(scope);
  const authorizerFunction = createFunction(scope, 'RealtimeAuthorizerFn', realtime.authorizer, deps);
  const routeFunctions = new Map(
    realtime.routes.map((route) => [route, createFunction(scope, `Realtime${pascalCase(route.route)}Fn`, route, deps)] as const),
  );
  const integration = (route: RealtimeRoute['route']) => {
    const [row, fn] = [...routeFunctions].find(([r]) => r.route === route)!;
    return new WebSocketLambdaIntegration(`Realtime${pascalCase(row.route)}Integration`, fn);
  };
  const api = new WebSocketApi(scope, 'RealtimeApi', {
    apiName: `${stack.stackName}-realtime`,
    description: 'Events of each user as they happen (docs/realtime.md)',
    connectRouteOptions: {
      integration: integration('$connect'),
      authorizer: new WebSocketLambdaAuthorizer('RealtimeAuthorizer', authorizerFunction, {
        // The token may come in either of two headers, so neither can be required here: every
        // handshake carries Sec-WebSocket-Key, and the authorizer decides (401 for no token).
        identitySource: ['route.request.header.Sec-WebSocket-Key'],
      }),
    },
    disconnectRouteOptions: { integration: integration('$disconnect') },
    defaultRouteOptions: { integration: integration('$default') },
  });
  const accessLogs = new LogGroup(scope, 'RealtimeAccessLogs', { retention: LOG_RETENTION, removalPolicy: RemovalPolicy.DESTROY });
  const stage = new WebSocketStage(scope, 'RealtimeStage', {
    webSocketApi: api,
    stageName: STAGE_NAME,
    autoDeploy: true,
    throttle: { rateLimit: deps.settings.throttle.rateLimit, burstLimit: deps.settings.throttle.burstLimit },
    accessLogSettings: {
      destination: new LogGroupLogDestination(accessLogs),
      format: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
    },
  });
  if (logsRole) stage.node.addDependency(logsRole);
  for (const [route, fn] of routeFunctions) if (route.manages) stage.grantManagementApiAccess(fn);
  new CfnOutput(scope, 'RealtimeUrl', { value: stage.url, description: 'Realtime WebSocket URL (docs/realtime.md)' });
  return { api, stage, authorizerFunction, routeFunctions, accessLogs };
}
