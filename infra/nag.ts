import { Stack, Token, Validations, type App, type CfnElement, type IAspect } from 'aws-cdk-lib';
import { AuthorizationType, CfnMethod, Method, RestApi } from 'aws-cdk-lib/aws-apigateway';
import { WebSocketApi, WebSocketRoute } from 'aws-cdk-lib/aws-apigatewayv2';
import { Table } from 'aws-cdk-lib/aws-dynamodb';
import { Rule } from 'aws-cdk-lib/aws-events';
import { CfnRole, Role } from 'aws-cdk-lib/aws-iam';
import { EventSourceMapping, Function as Lambda } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { deployTarget } from './settings.ts';

/** The rule packs `cdk synth` and the CDK tests run over the stack: an unacknowledged error fails the synth. */
export function addNagPacks(app: App): void {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
}

const acknowledge = (scope: IConstruct, id: string, reason: string) => Validations.of(scope).acknowledge({ id, reason });

const UNAUTHENTICATED_FALLBACK = 'The unauthenticated fallback: it answers 404 or 405 in the error envelope and reads nothing.';
const PREFLIGHT = 'CORS preflight (OPTIONS): browsers send it without credentials; API Gateway answers it itself and reads nothing.';
const HANDLER_AUTHENTICATES =
  'Deployed without Lambda authorizers (LocalStack flavour, docs/deploying.md): the handler itself resolves the bearer token and answers 401 without a valid one.';

/**
 * Every finding of the rule packs the stack accepts, each on the constructs it
 * concerns and with the reason (docs/operations.md lists them too), found by
 * construct type when the app synthesizes. Anything not acknowledged here
 * fails `cdk synth` and the CDK tests.
 */
export class AcknowledgedFindings implements IAspect {
  visit(node: IConstruct): void {
    if (node instanceof Lambda) this.lambda(node);
    else if (node instanceof RestApi) this.restApi(node);
    else if (node instanceof Method) this.method(node);
    else if (node instanceof WebSocketRoute && node.routeKey !== '$connect') {
      acknowledge(
        node,
        'AwsSolutions-APIG4',
        'A WebSocket API authorizes on $connect only (API Gateway runs no authorizer on other routes): the connection was authorized there, and the route reads its user from that authorization.',
      );
    } else if (node instanceof Queue) this.queue(node);
    else if (node instanceof Bucket) {
      acknowledge(
        node,
        'AwsSolutions-S1',
        "No server access logs: every request to this bucket is a URL one of the stack's functions presigned (or its own delete), and that function logs it with its request id, file and account; " +
          'a log bucket would be a second bucket to secure and expire for the same facts. CloudTrail S3 data events are the account-wide audit trail where one is required.',
      );
    } else if (node instanceof EventSourceMapping) {
      acknowledge(
        node,
        'Serverless-LambdaEventSourceMappingDestination',
        "A message that keeps failing goes to its queue's dead-letter queue (redrive policy, maxReceiveCount), which alarms.",
      );
    } else if (node instanceof Rule) {
      acknowledge(
        node,
        'Serverless-EventBusDLQ',
        'A scheduled, idempotent sweep: the next run follows a minute later, so a failed delivery loses nothing.',
      );
    } else if (node instanceof Role) this.role(node);
    else if (node instanceof Topic) {
      acknowledge(
        node,
        'AwsSolutions-SNS2',
        'Alarm notifications carry no customer data, and CloudWatch cannot publish to a topic encrypted with the AWS-managed SNS key.',
      );
      acknowledge(
        node,
        'Serverless-SNSRedrivePolicy',
        'An e-mail subscription for alarm notifications; the alarm state stays visible on the dashboard if a mail is lost.',
      );
    }
  }

  private lambda(fn: Lambda): void {
    acknowledge(
      fn,
      'Serverless-LambdaDLQ',
      'No dead-letter queue needed: API functions and authorizers are invoked synchronously (the caller gets the error), ' +
        'workers by SQS event sources whose queues dead-letter failed messages, and a scheduled run that fails goes to the ' +
        'failed-invocations queue (its asynchronous failure destination), which alarms.',
    );
    const role = fn.role;
    if (!role) return;
    acknowledge(
      role,
      'AwsSolutions-IAM5[Resource::*]',
      'X-Ray PutTraceSegments/PutTelemetryRecords (active tracing) support no resource-level permissions.',
    );
    const stack = Stack.of(fn);
    // cdk-nag names a pseudo parameter as <AWS::X> when the stack leaves it open, and by its value when the app sets it.
    const [partition, region] = [stack.partition, stack.region].map((v, i) =>
      Token.isUnresolved(v) ? ['<AWS::Partition>', '<AWS::Region>'][i] : v,
    );
    for (const api of logicalIdsOf(stack, WebSocketApi)) {
      acknowledge(
        role,
        `AwsSolutions-IAM5[Resource::arn:${partition}:execute-api:${region}:<AWS::AccountId>:<${api}>/prod/*/@connections/*]`,
        "Posting to this WebSocket API's connections: their ids exist only at run time, so the grant names the API's @connections path.",
      );
    }
    for (const bucket of logicalIdsOf(stack, Bucket)) {
      acknowledge(
        role,
        `AwsSolutions-IAM5[Resource::<${bucket}.Arn>/*]`,
        "The files bucket's objects: their keys (file ids) exist only at run time; the actions are only those the function's row names (infra/functions.ts, FILE_ACTIONS).",
      );
    }
    for (const table of tablesOf(Stack.of(fn))) {
      acknowledge(
        role,
        `AwsSolutions-IAM5[Resource::<${table}.Arn>/index/*]`,
        "The table's own global secondary indexes (gsi1, gsi2), granted by the table grant; nothing outside this table.",
      );
    }
  }

  private restApi(api: RestApi): void {
    acknowledge(
      api,
      'AwsSolutions-COG4',
      'Bearer tokens are issued by this service and checked by its TOKEN authorizer (docs/api-conventions.md, Authentication); there is no Cognito user pool.',
    );
    acknowledge(
      api,
      'AwsSolutions-APIG2',
      "Every handler validates body and query with strict schemas and answers the API's error envelope (docs/api-conventions.md); API Gateway's validator would answer in its own shape.",
    );
    acknowledge(
      api,
      'AwsSolutions-APIG3',
      'No WAF web ACL: the per-account usage plans, the stage throttle and the authorizer guard the API; a web ACL is an account-level choice (and cost) that can be attached to the stage.',
    );
    acknowledge(
      api.deploymentStage,
      'Serverless-APIGWStructuredLogging',
      "The access log format is JSON; its error message is inserted already quoted by API Gateway ($context.error.messageString), which the rule's parse of the template cannot see.",
    );
  }

  /** A method without authorization: the fallback, the preflight, or (LocalStack flavour) a route whose handler authenticates. */
  private method(method: Method): void {
    const cfn = method.node.defaultChild as CfnMethod;
    if (cfn.authorizationType !== AuthorizationType.NONE) return;
    const reason =
      method.httpMethod === 'OPTIONS'
        ? PREFLIGHT
        : method.httpMethod === 'ANY'
          ? UNAUTHENTICATED_FALLBACK
          : deployTarget(method) === 'localstack'
            ? HANDLER_AUTHENTICATES
            : undefined;
    if (reason === undefined) return;
    acknowledge(method, 'AwsSolutions-APIG4', reason);
    acknowledge(method, 'AwsSolutions-COG4', reason);
  }

  /** The dead-letter queue a queue names: its messages stay 14 days and its depth alarms. */
  private queue(queue: Queue): void {
    // Lambda's failure destination for the stream consumers and the schedules: a dead-letter queue SQS itself does not know as one.
    if (queue.node.id === 'FailedInvocationsQueue') {
      acknowledge(
        queue,
        'AwsSolutions-SQS3',
        "The failure destination of the change-stream event source mappings and of the schedules' asynchronous invocations (a dead-letter queue SQS does not know as one); its depth alarms.",
      );
      acknowledge(
        queue,
        'Serverless-SQSRedrivePolicy',
        'A dead-letter queue: its messages stay 14 days and its depth alarms; there is nowhere further to send them.',
      );
    }
    const deadLetters = queue.deadLetterQueue?.queue;
    if (deadLetters) {
      acknowledge(
        deadLetters,
        'Serverless-SQSRedrivePolicy',
        'A dead-letter queue: its messages stay 14 days and its depth alarms; there is nowhere further to send them.',
      );
    }
  }

  private role(role: Role): void {
    const cfn = role.node.defaultChild as CfnRole;
    const policy = 'service-role/AmazonAPIGatewayPushToCloudWatchLogs';
    if (!JSON.stringify(Stack.of(role).resolve(cfn.managedPolicyArns) ?? []).includes(policy)) return;
    acknowledge(
      role,
      `AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/${policy}]`,
      "The policy AWS maintains for exactly this role: API Gateway's account-wide CloudWatch Logs role.",
    );
  }
}

const found = new WeakMap<Stack, Map<unknown, string[]>>();
/** The logical ids of a stack's constructs of one class (its table, its WebSocket API), found once per stack. */
function logicalIdsOf(stack: Stack, kind: abstract new (...args: never[]) => IConstruct): string[] {
  let byKind = found.get(stack);
  if (!byKind) found.set(stack, (byKind = new Map()));
  let ids = byKind.get(kind);
  if (!ids) {
    ids = stack.node
      .findAll()
      .filter((c) => c instanceof kind)
      .map((c) => stack.getLogicalId(c.node.defaultChild as CfnElement));
    byKind.set(kind, ids);
  }
  return ids;
}

const tablesOf = (stack: Stack) => logicalIdsOf(stack, Table);
