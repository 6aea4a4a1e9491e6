import { CfnOutput, Stack } from 'aws-cdk-lib';
import { UsagePlan, type RestApi } from 'aws-cdk-lib/aws-apigateway';
import type { Construct } from 'constructs';
import { defaultUsagePlanName } from '../shared/rate-limits.ts';
import type { DeploySettings } from './settings.ts';

/**
 * The usage plan every account's API key starts in: the deploy-time default
 * limit (`accountRateLimit`, `accountBurstLimit`) for each account, counted
 * across both APIs, since one plan's limit is per key over all its stages.
 * The keys themselves are runtime data: the admin command line creates an
 * account's key (its value is what the authorizer returns as
 * `usageIdentifierKey`) and moves it to a plan of its own for its own limits
 * (docs/operations.md, Rate limits).
 */
export function defaultAccountPlan(scope: Construct, apis: RestApi[], settings: DeploySettings): UsagePlan {
  const stack = Stack.of(scope);
  const plan = new UsagePlan(scope, 'DefaultAccountUsagePlan', {
    name: defaultUsagePlanName(stack.stackName),
    description: 'Per-account default limit across both APIs; an account with limits of its own has a plan of its own',
    throttle: { rateLimit: settings.accountThrottle.rateLimit, burstLimit: settings.accountThrottle.burstLimit },
    apiStages: apis.map((api) => ({ api, stage: api.deploymentStage })),
  });
  new CfnOutput(scope, 'DefaultAccountUsagePlanId', { value: plan.usagePlanId, description: 'The usage plan new accounts are put in' });
  return plan;
}
