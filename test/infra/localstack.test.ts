import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateToken, revokeToken } from '#shared/data/tokens';
import { realtime, routes, STAGE_NAME, streams, type Route } from '#shared/routes';
import { invoke } from '../../scripts/local/lambda.ts';
import { synthStack } from '../steps/cdk-app.ts';
import { aTenant, type Tenant } from '../steps/given.ts';

// CloudFormation JSON, read by assertions.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Cfn = any;

/**
 * `cdk deploy -c target=localstack` (docs/deploying.md): LocalStack's free
 * edition creates no Lambda authorizer, so the flavour has none, and every
 * handler must then refuse a request on its own when no authorizer ran.
 */
describe('the LocalStack flavour (-c target=localstack)', () => {
  const { template } = synthStack({ target: 'localstack' }, 'LocalStackStack');
  const resources = (type: string) => Object.values(template.findResources(type)) as { Properties: Cfn }[];

  it('has no Lambda authorizer and no method that needs one', () => {
    template.resourceCountIs('AWS::ApiGateway::Authorizer', 0);
    const methods = resources('AWS::ApiGateway::Method');
    expect(methods.length).toBeGreaterThan(routes.length);
    expect(methods.filter((m) => m.Properties.AuthorizationType === 'CUSTOM')).toEqual([]);
    expect(methods.filter((m) => m.Properties.ApiKeyRequired === true)).toEqual([]);
  });

  it('has no usage plan or API key, which would need the authorizer to name the key', () => {
    template.resourceCountIs('AWS::ApiGateway::UsagePlan', 0);
    template.resourceCountIs('AWS::ApiGateway::ApiKey', 0);
    for (const api of resources('AWS::ApiGateway::RestApi')) expect(api.Properties.ApiKeySourceType).toBeUndefined();
  });

  it('still serves every route through its own function, on the Node major the default flavour runs', () => {
    const functions = resources('AWS::Lambda::Function');
    expect(new Set(functions.map((f) => f.Properties.Runtime))).toEqual(new Set(['nodejs24.x']));
    // Every route, a fallback per API, the workers and the schedule: only the authorizers and the realtime API's functions are gone.
    const { template: onAws } = synthStack({}, 'AwsStack');
    const apiCount = new Set(routes.map((r) => r.api)).size;
    const realtimeFunctions = realtime.routes.length + 1 + streams.filter((s) => s.realtime).length;
    expect(functions.length).toBe(Object.keys(onAws.findResources('AWS::Lambda::Function')).length - apiCount - realtimeFunctions);
  });

  it('deploys the files bucket as on AWS: private, encrypted, TLS only, with its lifecycle rules', () => {
    const [bucket] = resources('AWS::S3::Bucket');
    expect(resources('AWS::S3::Bucket')).toHaveLength(1);
    expect(bucket!.Properties.PublicAccessBlockConfiguration).toMatchObject({ BlockPublicAcls: true, RestrictPublicBuckets: true });
    expect(bucket!.Properties.LifecycleConfiguration.Rules).toHaveLength(3);
    expect(JSON.stringify(resources('AWS::S3::BucketPolicy'))).toContain('aws:SecureTransport');
  });

  it('has no WebSocket API (none in the free edition), and so no realtime fan-out', () => {
    template.resourceCountIs('AWS::ApiGatewayV2::Api', 0);
    template.resourceCountIs('AWS::ApiGatewayV2::Authorizer', 0);
    expect(template.findOutputs('RealtimeUrl')).toEqual({});
    const envs = resources('AWS::Lambda::Function').map((f) => f.Properties.Environment?.Variables ?? {});
    expect(envs.filter((e) => 'REALTIME_ENDPOINT' in e)).toEqual([]);
  });

  it('refuses an unknown target instead of deploying the AWS flavour by mistake', () => {
    expect(() => synthStack({ target: 'localstak' }, 'TypoStack')).toThrow(/target must be one of aws, localstack/);
  });
});

describe('every handler without an authorizer in front of it', () => {
  let tenant: Tenant;
  let revoked: Tenant;
  beforeAll(async () => {
    [tenant, revoked] = await Promise.all([aTenant(), aTenant()]);
    await revokeToken(revoked.token);
  });

  /** The proxy event API Gateway sends when no authorizer ran: `requestContext.authorizer` is null. */
  const event = (route: Route, authorization: string | undefined): APIGatewayProxyEvent => {
    const path = route.path.replace('{id}', route.api === 'email' ? '1' : 'msg_01JD0000000000000000000000');
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (authorization !== undefined) headers.authorization = authorization;
    return {
      resource: route.path,
      path,
      httpMethod: route.method,
      headers,
      multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
      queryStringParameters: null,
      multiValueQueryStringParameters: null,
      pathParameters: route.path.includes('{id}') ? { id: path.split('/').find((_, i) => route.path.split('/')[i] === '{id}')! } : null,
      stageVariables: null,
      body: route.method === 'POST' || route.method === 'PUT' ? '{}' : null,
      isBase64Encoded: false,
      requestContext: {
        accountId: '000000000000',
        apiId: route.api,
        authorizer: null,
        protocol: 'HTTP/1.1',
        httpMethod: route.method,
        identity: { sourceIp: '127.0.0.1' } as APIGatewayProxyEvent['requestContext']['identity'],
        path: `/${STAGE_NAME}${path}`,
        stage: STAGE_NAME,
        requestId: `req-${route.handler}`,
        requestTimeEpoch: Date.now(),
        resourceId: 'localstack',
        resourcePath: route.path,
      },
    };
  };

  const refusals = () => ({
    'no Authorization header': undefined,
    'an empty header': '',
    'another scheme': `Basic ${tenant.token}`,
    'a malformed token': 'Bearer tok_short',
    'a well-formed token nobody issued': `Bearer ${generateToken()}`,
    'a revoked token': `Bearer ${revoked.token}`,
  });

  it.each(routes.map((r) => [`${r.method} ${r.path}`, r] as const))('%s answers 401 to a missing or bad token', async (_, route) => {
    for (const [what, authorization] of Object.entries(refusals())) {
      const res = await invoke<APIGatewayProxyResult>(route.handler, event(route, authorization));
      expect(res.statusCode, what).toBe(401);
      expect(JSON.parse(res.body).error.type, what).toBe('authentication_error');
      expect(res.headers?.['WWW-Authenticate'] ?? res.headers?.['www-authenticate'], what).toBe('Bearer');
    }
  });

  it.each(routes.map((r) => [`${r.method} ${r.path}`, r] as const))('%s lets a valid token past authentication', async (_, route) => {
    const res = await invoke<APIGatewayProxyResult>(route.handler, event(route, `Bearer ${tenant.token}`));
    expect(res.statusCode).not.toBe(401);
    expect(res.statusCode).toBeLessThan(500);
  });
});
