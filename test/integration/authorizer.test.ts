import { describe, expect, it } from 'vitest';
import { handler } from '#functions/auth/authorizer';
import { usageKeyValue } from '#shared/rate-limits';
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
    expect(result.context).toEqual({ kind: 'user', accountId: t.accountId, contactId: t.contactIds.alice });
  });

  it("allows the account's secret key too, naming the credential's kind: the route's handler takes or refuses it", async () => {
    const t = await aTenant();
    const result = await authorize(`Bearer ${t.secretKey}`);
    expect(result.policyDocument.Statement).toEqual([
      { Action: 'execute-api:Invoke', Effect: 'Allow', Resource: 'arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/*' },
    ]);
    expect(result.context).toEqual({ kind: 'secret', accountId: t.accountId, keyId: expect.stringMatching(/^key_/) });
    // The same account's usage plan throttles both credentials
    expect(result.usageIdentifierKey).toBe(usageKeyValue(t.accountId));
  });

  it("names the account's API key, so that the usage plan holding it throttles that account alone", async () => {
    const [a, b] = [await aTenant(), await aTenant()];
    const [forA, forB] = [await authorize(`Bearer ${a.token}`), await authorize(`Bearer ${b.token}`)];
    // API Gateway key values: 20 to 128 alphanumeric characters, one per account.
    expect(forA.usageIdentifierKey).toMatch(/^[A-Za-z0-9]{20,128}$/);
    expect(forA.usageIdentifierKey).toBe(usageKeyValue(a.accountId));
    expect(forB.usageIdentifierKey).not.toBe(forA.usageIdentifierKey);
  });

  it('denies an unknown, malformed or missing token on the whole API, without failing (no function error to alarm on)', async () => {
    for (const header of [`Bearer tok_${'x'.repeat(43)}`, `Bearer sk_${'x'.repeat(43)}`, 'Basic abc', '']) {
      const result = await authorize(header);
      expect(result.policyDocument.Statement).toEqual([
        { Action: 'execute-api:Invoke', Effect: 'Deny', Resource: 'arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/*' },
      ]);
      expect(result.context).toBeUndefined();
      expect(result.usageIdentifierKey).toBeUndefined();
    }
  });
});
