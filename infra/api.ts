import { Duration, Stack } from 'aws-cdk-lib';
import {
  AuthorizationType,
  EndpointType,
  IdentitySource,
  LambdaIntegration,
  RestApi,
  TokenAuthorizer,
  type IResource,
} from 'aws-cdk-lib/aws-apigateway';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { Construct } from 'constructs';
import { authorizer, fallback, routes, type ApiName, type Route } from '../shared/routes.ts';
import { createFunction, pascalCase, type FunctionDeps } from './functions.ts';
import { addGatewayResponses } from './gateway-responses.ts';

export const STAGE_NAME = 'prod';
export const THROTTLING = { rateLimit: 100, burstLimit: 200 };

export interface BuiltApi {
  api: RestApi;
  /** Base URL without trailing slash; the route paths (`/v1/...`) are appended to it. */
  baseUrl: string;
  authorizerFunction: NodejsFunction;
  fallbackFunction: NodejsFunction;
  routeFunctions: Map<Route, NodejsFunction>;
}

/** Distinct API names in the route table, in first-seen order. */
export const apiNames = (): ApiName[] => [...new Set(routes.map((r) => r.api))];

/** One REST API per `api` value of the route table: one Lambda and one method per row. */
export function buildApi(scope: Construct, apiName: ApiName, deps: FunctionDeps): BuiltApi {
  const prefix = pascalCase(apiName);
  const stack = Stack.of(scope);

  const api = new RestApi(scope, `${prefix}Api`, {
    restApiName: `${stack.stackName}-${apiName}`,
    endpointTypes: [EndpointType.REGIONAL],
    // The account-wide CloudWatch role is a singleton shared by every API in the region: not ours to own.
    cloudWatchRole: false,
    deployOptions: {
      stageName: STAGE_NAME,
      throttlingRateLimit: THROTTLING.rateLimit,
      throttlingBurstLimit: THROTTLING.burstLimit,
    },
  });
  addGatewayResponses(api);

  // API_NAME lets the shared handlers pick this API's rows out of the route table.
  const apiEnv = { API_NAME: apiName };
  const authorizerFunction = createFunction(scope, `${prefix}AuthorizerFn`, { ...authorizer, environment: apiEnv }, deps);
  const fallbackFunction = createFunction(scope, `${prefix}FallbackFn`, { ...fallback, environment: apiEnv }, deps);

  const tokenAuthorizer = new TokenAuthorizer(scope, `${prefix}TokenAuthorizer`, {
    handler: authorizerFunction,
    identitySource: IdentitySource.header('Authorization'),
    // No caching: a revoked token must stop working on the next request.
    resultsCacheTtl: Duration.seconds(0),
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

  const routeFunctions = new Map<Route, NodejsFunction>();
  for (const route of routes.filter((r) => r.api === apiName)) {
    const fn = createFunction(scope, `${pascalCase(route.handler)}Fn`, route, deps);
    resourceFor(route.path).addMethod(route.method, new LambdaIntegration(fn), {
      authorizer: tokenAuthorizer,
      authorizationType: AuthorizationType.CUSTOM,
    });
    routeFunctions.set(route, fn);
  }

  // Explicit methods win over ANY, so other methods on a known path reach the
  // fallback (405) and unknown paths reach it through {proxy+} (404). Every
  // intermediate resource (/, /v1, ...) needs one too, or API Gateway answers 403.
  withFallback.add(api.root.addResource('{proxy+}'));
  for (const resource of withFallback) {
    resource.addMethod('ANY', fallbackIntegration, { authorizationType: AuthorizationType.NONE });
  }

  const baseUrl = `https://${api.restApiId}.execute-api.${stack.region}.${stack.urlSuffix}/${STAGE_NAME}`;
  return { api, baseUrl, authorizerFunction, fallbackFunction, routeFunctions };
}
