import { App } from 'aws-cdk-lib';
import { ValidatorConfigError } from '../shared/email/validator/config.ts';
import { addNagPacks } from './nag.ts';
import { DeploySettingError } from './settings.ts';
import { MessagingAndEmailValidationStack } from './stack.ts';

const app = new App();

try {
  new MessagingAndEmailValidationStack(app, 'MessagingAndEmailValidationStack', {
    // A context value like every other deploy-time choice; STACK_NAME still read, as the admin CLI reads it.
    stackName: (app.node.tryGetContext('stackName') as string | undefined) || process.env.STACK_NAME || 'serverless-messaging',
    // Left undefined without credentials: the stack is then environment-agnostic and still synthesizes.
    env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
    description: 'Messaging and email validation APIs: API Gateway REST, Lambda, DynamoDB, SQS',
  });
} catch (error) {
  // A setting that cannot work: one line naming it, not a stack trace.
  if (!(error instanceof DeploySettingError || error instanceof ValidatorConfigError)) throw error;
  console.error(`cdk synth: ${error.message}`);
  process.exit(1);
}

// cdk-nag's AwsSolutions and Serverless packs: an unacknowledged finding fails the synth (and the deploy).
addNagPacks(app);

app.synth();
