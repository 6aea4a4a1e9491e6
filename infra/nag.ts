import { Validations, type App, type CfnElement } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import type { MessagingAndEmailValidationStack } from './stack.ts';

/** The rule packs `cdk synth` and the CDK tests run over the stack: an unacknowledged error fails the synth. */
export function addNagPacks(app: App): void {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
}

const acknowledge = (scope: IConstruct, id: string, reason: string) => Validations.of(scope).acknowledge({ id, reason });

/**
 * Every finding of the rule packs the stack accepts, each on the constructs it
 * concerns and with the reason (docs/operations.md lists them too). Anything
 * not acknowledged here fails `cdk synth` and the CDK tests.
 */
export function acknowledgeFindings(stack: MessagingAndEmailValidationStack): void {
  const table = stack.getLogicalId(stack.table.node.defaultChild as CfnElement);

  for (const fn of stack.namedFunctions().values()) {
    const runtime =
      'Pinned to the Node major the test suite runs on; moving every function to a newer runtime is a change of its own, made with the tests on that major.';
    acknowledge(fn, 'AwsSolutions-L1', runtime);
    acknowledge(fn, 'Serverless-LambdaLatestVersion', runtime);
    acknowledge(
      fn,
      'Serverless-LambdaDLQ',
      'No asynchronous invocations to catch: API functions and authorizers are invoked synchronously (the caller gets the error), ' +
        'workers by SQS event sources whose queues dead-letter failed messages, and the sweeper is re-run by its schedule every minute.',
    );
    acknowledge(
      fn.role!,
      'AwsSolutions-IAM5[Resource::*]',
      'X-Ray PutTraceSegments/PutTelemetryRecords (active tracing) support no resource-level permissions.',
    );
    acknowledge(
      fn.role!,
      `AwsSolutions-IAM5[Resource::<${table}.Arn>/index/*]`,
      "The table's own global secondary indexes (gsi1, gsi2), granted by the table grant; nothing outside this table.",
    );
  }

  for (const built of stack.apis.values()) {
    acknowledge(
      built.api,
      'AwsSolutions-COG4',
      'Bearer tokens are issued by this service and checked by its TOKEN authorizer (contract: Authentication); there is no Cognito user pool.',
    );
    acknowledge(
      built.api,
      'AwsSolutions-APIG2',
      "Every handler validates body and query with strict schemas and answers the API's error envelope (docs/api-conventions.md); API Gateway's validator would answer in its own shape.",
    );
    acknowledge(
      built.api,
      'AwsSolutions-APIG3',
      'No WAF web ACL: the stage throttle and the authorizer guard the API; a web ACL is an account-level choice (and cost) that can be attached to the stage.',
    );
    acknowledge(
      built.api.deploymentStage,
      'Serverless-APIGWStructuredLogging',
      "The access log format is JSON; its error message is inserted already quoted by API Gateway ($context.error.messageString), which the rule's parse of the template cannot see.",
    );
    for (const method of built.fallbackMethods) {
      acknowledge(
        method,
        'AwsSolutions-APIG4',
        'The unauthenticated fallback: it answers 404 or 405 in the error envelope and reads nothing.',
      );
      acknowledge(
        method,
        'AwsSolutions-COG4',
        'The unauthenticated fallback: it answers 404 or 405 in the error envelope and reads nothing.',
      );
    }
    // Browsers send the preflight without credentials, so it cannot be authorized; a mock integration answers it.
    for (const method of built.api.methods.filter((m) => m.httpMethod === 'OPTIONS')) {
      acknowledge(
        method,
        'AwsSolutions-APIG4',
        'CORS preflight (OPTIONS): browsers send it without credentials; API Gateway answers it itself and reads nothing.',
      );
      acknowledge(
        method,
        'AwsSolutions-COG4',
        'CORS preflight (OPTIONS): browsers send it without credentials; API Gateway answers it itself and reads nothing.',
      );
    }
  }

  for (const dlq of Object.values(stack.deadLetterQueues)) {
    acknowledge(
      dlq,
      'Serverless-SQSRedrivePolicy',
      'A dead-letter queue: its messages stay 14 days and its depth alarms; there is nowhere further to send them.',
    );
  }
  acknowledge(
    stack.streamDeadLetterQueue,
    'AwsSolutions-SQS3',
    "The change-stream consumer's failure destination (a dead-letter queue of the event source mapping, which SQS does not know as one); its depth alarms.",
  );
  acknowledge(
    stack.streamDeadLetterQueue,
    'Serverless-SQSRedrivePolicy',
    'A dead-letter queue: its messages stay 14 days and its depth alarms; there is nowhere further to send them.',
  );
  for (const fn of stack.workerFunctions.values()) {
    for (const mapping of fn.node.children.filter((c) => c.node.id.startsWith('SqsEventSource:'))) {
      acknowledge(
        mapping,
        'Serverless-LambdaEventSourceMappingDestination',
        "A message that keeps failing goes to its queue's dead-letter queue (redrive policy, maxReceiveCount), which alarms.",
      );
    }
  }
  for (const rule of stack.scheduleRules.values()) {
    acknowledge(
      rule,
      'Serverless-EventBusDLQ',
      'A scheduled, idempotent sweep: the next run follows a minute later, so a failed delivery loses nothing.',
    );
  }

  if (stack.apiGatewayLogsRole) {
    acknowledge(
      stack.apiGatewayLogsRole,
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      "The policy AWS maintains for exactly this role: API Gateway's account-wide CloudWatch Logs role.",
    );
  }
  const topic = stack.monitoring.topic;
  if (topic) {
    acknowledge(
      topic,
      'AwsSolutions-SNS2',
      'Alarm notifications carry no customer data, and CloudWatch cannot publish to a topic encrypted with the AWS-managed SNS key.',
    );
    acknowledge(
      topic,
      'Serverless-SNSRedrivePolicy',
      'An e-mail subscription for alarm notifications; the alarm state stays visible on the dashboard if a mail is lost.',
    );
  }
}
