import { App } from 'aws-cdk-lib';
import { addNagPacks } from './nag.ts';
import { ServerlessMessagingStack } from './stack.ts';

const app = new App();

new ServerlessMessagingStack(app, 'ServerlessMessagingStack', {
  stackName: process.env.STACK_NAME || 'serverless-messaging',
  // Left undefined without credentials: the stack is then environment-agnostic and still synthesizes.
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  description: 'Serverless messaging API: REST API, Lambda, DynamoDB, SQS',
});

// cdk-nag's AwsSolutions and Serverless packs: an unacknowledged finding fails the synth (and the deploy).
addNagPacks(app);

app.synth();
