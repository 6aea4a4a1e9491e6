import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import {
  AccessLogField,
  AccessLogFormat,
  ApiKeySourceType,
  AuthorizationType,
  EndpointType,
  IdentitySource,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  RestApi,
  TokenAuthorizer,
  type IResource,
} from 'aws-cdk-lib/aws-apigateway';
import type { Function as Lambda } from 'aws-cdk-lib/aws-lambda';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { Construct, IDependable } from 'constructs';
import { CORS_ALLOW_HEADERS, CORS_ENV, CORS_EXPOSE_HEADERS, CORS_MAX_AGE_SECONDS } from '../shared/http/cors.ts';
import { AUTHORIZATION_PATTERN } from '../shared/data/tokens.ts';
import { apiMethods, authorizer, fallback, routes, STAGE_NAME, type ApiName, type Route } from '../shared/routes.ts';
import { createFunction, LOG_RETENTION, pascalCase, type FunctionDeps } from './functions.ts';
import { addGatewayResponses } from './gateway-responses.ts';

/**
 * One JSON object per request in the stage's access log (the fields of
 * docs/operations.md). Values are quoted strings (a field API Gateway cannot
 * fill is `-`), except the error message: API Gateway quotes and escapes that
 * one itself, so a message with quotes in it cannot break the line.
 */
export const ACCESS_LOG_FIELDS = {
  requestId: AccessLogField.contextRequestId(),
  sourceIp: AccessLogField.contextIdentitySourceIp(),
  method: AccessLogField.contextHttpMethod(),
  path: AccessLogField.contextPath(),
  resourcePath: AccessLogField.contextResourcePath(),
  status: AccessLogField.contextStatus(),
  latencyMs: AccessLogField.contextResponseLatency(),
  integrationLatencyMs: AccessLogField.contextIntegrationLatency(),
  accountId: AccessLogField.contextAuthorizer('accountId'),
  authorizerError: AccessLogField.contextAuthorizerError(),
  requestTime: AccessLogField.contextRequestTime(),
};
const PRE_QUOTED = { error: AccessLogField.contextErrorMessageString() };

export const accessLogFormat = (): string =>
  `${JSON.stringify(ACCESS_LOG_FIELDS).slice(0, -1)},${Object.entries(PRE_QUOTED)
    .map(([name, variable]) => `${JSON.stringify(name)}:${variable}`)
    .join(',')}}`;

export interface BuiltApi {
  api: RestApi;
  /** Base URL without trailing slash; the route paths (`/v1/...`) are appended to it. */
  baseUrl: string;
  /** Absent on LocalStack (`target=localstack`): the handlers resolve the token themselves. */
  authorizerFunction: Lambda | undefined;
  fallbackFunction: Lambda;
  routeFunctions: Map<Route, Lambda>;
  accessLogs: LogGroup;
}

const CREDENTIAL_NAMES = { user: 'user token', secret: 'secret key', any: 'user token or secret key' } as const;

/** What a route's function is for, as the console lists it: `GET /v1/contacts (secret key)`. */
export const describeRoute = (route: Route) => `${route.method} ${route.path} (${CREDENTIAL_NAMES[route.credential]})`;

/** Distinct API names in the route table, in first-seen order. */
export const apiNames = (): ApiName[] => [...new Set(routes.map((r) => r.api))];

/**
 * One REST API per `api` value of the route table: one Lambda and one method
 * per row. `logsRole` is API Gateway's account-wide CloudWatch role, which
 * the stage's logs need in place before it deploys.
 *
 * On AWS every route method sits behind the TOKEN authorizer and requires an
 * API key that the authorizer supplies (`usageIdentifierKey`, the account's
 * key): the usage plan holding that key throttles the account. On LocalStack
 * (`target=localstack`) there is neither: its free edition runs no Lambda
 * authorizer, and the handlers authenticate the token themselves
 * (shared/http/authenticate.ts).
 */
export function buildApi(scope: Construct, apiName: ApiName, deps: FunctionDeps, logsRole?: IDependable): BuiltApi {
  const prefix = pascalCase(apiName);
  const stack = Stack.of(scope);
  const cors = deps.settings.corsOrigins;
  const onAws = deps.settings.target === 'aws';
  const accessLogs = new LogGroup(scope, `${prefix}AccessLogs`, { retention: LOG_RETENTION, removalPolicy: RemovalPolicy.DESTROY });

  const api = new RestApi(scope, `${prefix}Api`, {
    restApiName: `${stack.stackName}-${apiName}`,
    endpointTypes: [EndpointType.REGIONAL],
    // The account-wide CloudWatch role is a singleton shared by every API in the region: the stack makes it once (logsRole).
    cloudWatchRole: false,
    // The key a usage plan throttles by comes from the authorizer, never from a client's header.
    apiKeySourceType: onAws ? ApiKeySourceType.AUTHORIZER : undefined,
    deployOptions: {
      stageName: STAGE_NAME,
      // Shared by all callers of this API, a ceiling above the per-account usage plans; see docs/operations.md (Limits).
      throttlingRateLimit: deps.settings.throttle.rateLimit,
      throttlingBurstLimit: deps.settings.throttle.burstLimit,
      tracingEnabled: true,
      accessLogDestination: new LogGroupLogDestination(accessLogs),
      accessLogFormat: AccessLogFormat.custom(accessLogFormat()),
      // Execution logs only for errors (authorizer failures, integration errors); never request bodies.
      loggingLevel: MethodLoggingLevel.ERROR,
      dataTraceEnabled: false,
    },
    // Every resource (the {proxy+} catch-all too) answers the browser's preflight, without the authorizer.
    defaultCorsPreflightOptions: cors.length
      ? {
          allowOrigins: cors,
          allowMethods: apiMethods(apiName),
          allowHeaders: CORS_ALLOW_HEADERS,
          exposeHeaders: CORS_EXPOSE_HEADERS,
          maxAge: Duration.seconds(CORS_MAX_AGE_SECONDS),
        }
      : undefined,
  });
  if (logsRole) api.deploymentStage.node.addDependency(logsRole);
  addGatewayResponses(api, cors);

  // API_NAME lets the shared handlers pick this API's rows out of the route table;
  // CORS_ORIGINS lets every function add the CORS headers to its own responses.
  const corsEnv: Record<string, string> = cors.length ? { [CORS_ENV]: cors.join(',') } : {};
  const apiEnv = { API_NAME: apiName, ...corsEnv };
  const authorizerFunction = onAws
    ? createFunction(scope, `${prefix}AuthorizerFn`, { ...authorizer, environment: apiEnv }, deps)
    : undefined;
  const fallbackFunction = createFunction(scope, `${prefix}FallbackFn`, { ...fallback, environment: apiEnv }, deps);

  const tokenAuthorizer =
    authorizerFunction &&
    new TokenAuthorizer(scope, `${prefix}TokenAuthorizer`, {
      handler: authorizerFunction,
      identitySource: IdentitySource.header('Authorization'),
      // API Gateway answers 401 itself, invoking nothing, when the header cannot hold a token.
      validationRegex: AUTHORIZATION_PATTERN.source,
      // One invocation per token per TTL instead of one per request; a revocation takes up to
      // that long. The authorizer allows the whole API, as a cached policy serves every route.
      resultsCacheTtl: Duration.seconds(deps.settings.authCacheSeconds),
    });

  // One API-wide invoke permission instead of one per method keeps the fallback's resource policy small.
  const fallbackIntegration = new LambdaIntegration(fallbackFunction, { scopePermissionToMethod: false });
  const withFallback = new Set<IResource>([api.root]);

  const resourceFor = (path: string): IResource => {
    let resource: IResource = api.root;
    for (const segment of path.split('/').filter(Boolean)) {
      resource = resource.getResource(segment) ?? resource.addResource(segment);
      withFallback.add(resource);
    }
    return resource;
  };

  const routeFunctions = new Map<Route, Lambda>();
  for (const route of routes.filter((r) => r.api === apiName)) {
    // Shown by GET /v1/account: the limit an account without its own gets.
    const limitsEnv: Record<string, string> = route.showsLimits
      ? {
          ACCOUNT_RATE_LIMIT: String(deps.settings.accountThrottle.rateLimit),
          ACCOUNT_BURST_LIMIT: String(deps.settings.accountThrottle.burstLimit),
        }
      : {};
    const fn = createFunction(
      scope,
      `${pascalCase(route.handler)}Fn`,
      { ...route, description: describeRoute(route), environment: { ...corsEnv, ...limitsEnv } },
      deps,
    );
    resourceFor(route.path).addMethod(
      route.method,
      // Only the stage may invoke it: the console's test-invoke would need a second permission per route.
      new LambdaIntegration(fn, { allowTestInvoke: false }),
      tokenAuthorizer
        ? { authorizer: tokenAuthorizer, authorizationType: AuthorizationType.CUSTOM, apiKeyRequired: true }
        : { authorizationType: AuthorizationType.NONE },
    );
    routeFunctions.set(route, fn);
  }

  // Explicit methods win over ANY, so other methods on a known path reach the
  // fallback (405) and unknown paths reach it through {proxy+} (404). Every
  // intermediate resource (/, /v1, ...) needs one too, or API Gateway answers 403.
  withFallback.add(api.root.addResource('{proxy+}'));
  for (const resource of withFallback) resource.addMethod('ANY', fallbackIntegration, { authorizationType: AuthorizationType.NONE });

  const baseUrl = `https://${api.restApiId}.execute-api.${stack.region}.${stack.urlSuffix}/${STAGE_NAME}`;
  return { api, baseUrl, authorizerFunction, fallbackFunction, routeFunctions, accessLogs };
}
