import { RemovalPolicy } from 'aws-cdk-lib';
import { CfnAccount } from 'aws-cdk-lib/aws-apigateway';
import { ManagedPolicy, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';

/**
 * API Gateway writes access and execution logs through one role per account
 * and region (the `AWS::ApiGateway::Account` setting); a stage with logging
 * does not deploy without it. The stack sets it unless told the account
 * already has one (`-c apiGatewayCloudWatchRole=false`). Both are retained
 * when the stack goes: other APIs of the account may log through the role.
 */
export function apiGatewayLogsRole(scope: Construct): { role: Role; account: CfnAccount } {
  const role = new Role(scope, 'ApiGatewayCloudWatchRole', {
    assumedBy: new ServicePrincipal('apigateway.amazonaws.com'),
    managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName('service-role/AmazonAPIGatewayPushToCloudWatchLogs')],
  });
  role.applyRemovalPolicy(RemovalPolicy.RETAIN);
  const account = new CfnAccount(scope, 'ApiGatewayAccount', { cloudWatchRoleArn: role.roleArn });
  account.applyRemovalPolicy(RemovalPolicy.RETAIN);
  return { role, account };
}
