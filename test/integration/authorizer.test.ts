import { describe, expect, it } from 'vitest';
import { handler } from '#functions/auth/authorizer';
import { aTenant } from '../steps/given.ts';

const methodArn = 'arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/GET/v1/conversations';
const authorize = (authorizationToken: string) => handler({ type: 'TOKEN', authorizationToken, methodArn });

describe('TOKEN authorizer', () => {
  it('allows a valid token on the whole API (API Gateway reuses a cached policy for every route), with the account and contact for the handler', async () => {
    const t = await aTenant();
    const result = await authorize(`Bearer ${t.token}`);
    expect(result.policyDocument.Statement).toEqual([
      { Action: 'execute-api:Invoke', Effect: 'Allow', Resource: 'arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/*' },
    ]);
    expect(result.context).toEqual({ accountId: t.accountId, contactId: t.contactIds.alice });
  });

  it('denies an unknown, malformed or missing token on the whole API, without failing (no function error to alarm on)', async () => {
    for (const header of [`Bearer tok_${'x'.repeat(43)}`, 'Basic abc', '']) {
      const result = await authorize(header);
      expect(result.policyDocument.Statement).toEqual([
        { Action: 'execute-api:Invoke', Effect: 'Deny', Resource: 'arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/*' },
      ]);
      expect(result.context).toBeUndefined();
    }
  });
});
