import { App } from 'aws-cdk-lib';
import { addNagPacks } from './nag.ts';
import { MessagingAndEmailValidationStack } from './stack.ts';

const app = new App();

new MessagingAndEmailValidationStack(app, 'MessagingAndEmailValidationStack', {
  stackName: process.env.STACK_NAME || 'serverless-messaging',
  // Left undefined without credentials: the stack is then environment-agnostic and still synthesizes.
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  description: 'Messaging and email validation APIs: API Gateway REST, Lambda, DynamoDB, SQS',
});

// cdk-nag's AwsSolutions and Serverless packs: an unacknowledged finding fails the synth (and the deploy).
addNagPacks(app);

app.synth();
