import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { authorizer, fallback, realtime, routes, schedules, streams, workers, type ApiName } from '#shared/routes';
import { queues } from '#shared/queues';
import { lambdaContext, type FunctionRef, type Invoker } from './lambda.ts';

/** `webhook-events` -> `WebhookEvents`, as infra/functions.ts makes construct ids (not imported: it loads aws-cdk-lib). */
const pascalCase = (s: string) =>
  s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');

/**
 * Runs the functions as `cdk synth` wrote them into a cloud assembly
 * (cdk.out), wired from the synthesized template itself: which function each
 * API method, authorizer, event source and schedule invokes, the bundle in
 * its asset directory, its handler string, and its environment variables with
 * `Ref`/`GetAtt` resolved to the local table and queues. A bundling fault, a
 * wrong handler or a missing variable then fails here as it would on AWS.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Resource = { Type: string; Properties: any; Metadata?: Record<string, string> };

export interface AssemblyFunction {
  logicalId: string;
  /** The bundle file Lambda would load, from the handler string (`index.handler` -> index.mjs). */
  file: string;
  exportName: string;
  timeoutSeconds: number;
  /** The template's variables, intrinsic functions still unresolved. */
  environment: Record<string, unknown>;
}

/** Local names for the stack's resources: the table name, each queue's URL by its physical name, the realtime server's `@connections` URL. */
export interface LocalResources {
  tableName: string;
  queueUrls: Record<string, string>;
  realtimeEndpoint?: string;
  /** The local S3 server's bucket, for the stack's files bucket. */
  filesBucket?: string;
}

export class CloudAssembly {
  readonly resources: Record<string, Resource>;
  readonly stackName: string;

  constructor(
    readonly dir: string,
    templateFile: string,
  ) {
    this.resources = JSON.parse(readFileSync(path.join(dir, templateFile), 'utf8')).Resources;
    const api = Object.values(this.resources).find((r) => r.Type === 'AWS::ApiGateway::RestApi');
    this.stackName = String(api?.Properties.Name).replace(/-(messaging|email)$/, '');
  }

  /** The one stack of the assembly (its manifest names the template). */
  static read(dir: string): CloudAssembly {
    const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
    const stacks = Object.values(manifest.artifacts as Record<string, { type: string; properties?: { templateFile: string } }>).filter(
      (a) => a.type === 'aws:cloudformation:stack',
    );
    if (stacks.length !== 1) throw new Error(`expected one stack in ${dir}, found ${stacks.length}`);
    return new CloudAssembly(dir, stacks[0]!.properties!.templateFile);
  }

  private ofType(type: string): [string, Resource][] {
    return Object.entries(this.resources).filter(([, r]) => r.Type === type);
  }

  /** Every Lambda function of the template, with its bundle. */
  functions(): AssemblyFunction[] {
    return this.ofType('AWS::Lambda::Function').map(([logicalId, r]) => this.describe(logicalId, r));
  }

  private describe(logicalId: string, r: Resource): AssemblyFunction {
    const assetPath = r.Metadata?.['aws:asset:path'];
    if (!assetPath) throw new Error(`${logicalId}: no bundled asset (aws:asset:path)`);
    const handler = String(r.Properties.Handler);
    const dot = handler.lastIndexOf('.');
    const base = path.join(this.dir, assetPath, handler.slice(0, dot));
    const file = ['.mjs', '.js', '.cjs'].map((ext) => base + ext).find(existsSync);
    if (!file) throw new Error(`${logicalId}: handler ${handler} names no file in ${assetPath}`);
    return {
      logicalId,
      file,
      exportName: handler.slice(dot + 1),
      timeoutSeconds: Number(r.Properties.Timeout ?? 3),
      environment: r.Properties.Environment?.Variables ?? {},
    };
  }

  private functionById(logicalId: string): AssemblyFunction {
    const r = this.resources[logicalId];
    if (r?.Type !== 'AWS::Lambda::Function') throw new Error(`${logicalId} is not a function of the template`);
    return this.describe(logicalId, r);
  }

  /** The logical id of the function an integration or authorizer URI invokes. */
  private invoked(uri: unknown): string {
    const ids = [...JSON.stringify(uri).matchAll(/"Fn::GetAtt":\["([^"]+)","Arn"\]/g)].map((m) => m[1]!);
    const fn = ids.find((id) => this.resources[id]?.Type === 'AWS::Lambda::Function');
    if (!fn) throw new Error(`no function in ${JSON.stringify(uri)}`);
    return fn;
  }

  private restApi(api: ApiName): string {
    const found = this.ofType('AWS::ApiGateway::RestApi').find(([, r]) => r.Properties.Name === `${this.stackName}-${api}`);
    if (!found) throw new Error(`no REST API for ${api}`);
    return found[0];
  }

  private resourcePath(resourceId: unknown): string {
    if (!resourceId || typeof resourceId !== 'object' || !('Ref' in resourceId)) return '/';
    const r = this.resources[(resourceId as { Ref: string }).Ref]!;
    const parent = this.resourcePath(r.Properties.ParentId);
    return `${parent === '/' ? '' : parent}/${r.Properties.PathPart}`;
  }

  /** The function the API's method on this resource path integrates with. */
  method(api: ApiName, httpMethod: string, resourcePath: string): AssemblyFunction {
    const restApi = this.restApi(api);
    const found = this.ofType('AWS::ApiGateway::Method').find(
      ([, r]) =>
        r.Properties.RestApiId.Ref === restApi &&
        r.Properties.HttpMethod === httpMethod &&
        this.resourcePath(r.Properties.ResourceId ?? { 'Fn::GetAtt': [restApi, 'RootResourceId'] }) === resourcePath,
    );
    if (!found) throw new Error(`the ${api} API has no ${httpMethod} ${resourcePath} method`);
    return this.functionById(this.invoked(found[1].Properties.Integration.Uri));
  }

  authorizer(api: ApiName): AssemblyFunction {
    const restApi = this.restApi(api);
    const found = this.ofType('AWS::ApiGateway::Authorizer').find(([, r]) => r.Properties.RestApiId.Ref === restApi);
    if (!found) throw new Error(`the ${api} API has no authorizer`);
    return this.functionById(this.invoked(found[1].Properties.AuthorizerUri));
  }

  /** The function an SQS event source mapping feeds from the queue with this physical name. */
  queueConsumer(queueName: string): AssemblyFunction {
    const found = this.ofType('AWS::Lambda::EventSourceMapping').find(([, r]) => {
      const queue = this.resources[r.Properties.EventSourceArn['Fn::GetAtt'][0]];
      return queue?.Properties.QueueName === queueName;
    });
    if (!found) throw new Error(`nothing consumes ${queueName}`);
    return this.functionById(found[1].Properties.FunctionName.Ref);
  }

  /** The function a route of the WebSocket API (`$connect`, ...) integrates with. */
  realtimeRoute(routeKey: string): AssemblyFunction {
    const found = this.ofType('AWS::ApiGatewayV2::Route').find(([, r]) => r.Properties.RouteKey === routeKey);
    if (!found) throw new Error(`the realtime API has no ${routeKey} route`);
    const integration = this.resources[found[1].Properties.Target['Fn::Join'][1][1].Ref]!;
    return this.functionById(this.invoked(integration.Properties.IntegrationUri));
  }

  realtimeAuthorizer(): AssemblyFunction {
    const found = this.ofType('AWS::ApiGatewayV2::Authorizer')[0];
    if (!found) throw new Error('the realtime API has no authorizer');
    return this.functionById(this.invoked(found[1].Properties.AuthorizerUri));
  }

  /** The function a DynamoDB stream event source mapping feeds, by its construct id (`<Name>StreamFn`). */
  streamConsumer(name: string): AssemblyFunction {
    const prefix = pascalCase(name) + 'StreamFn';
    const found = this.ofType('AWS::Lambda::EventSourceMapping').find(
      ([, r]) => r.Properties.EventSourceArn['Fn::GetAtt']?.[1] === 'StreamArn' && String(r.Properties.FunctionName.Ref).startsWith(prefix),
    );
    if (!found) throw new Error(`no stream consumer ${name}`);
    return this.functionById(found[1].Properties.FunctionName.Ref);
  }

  /** The function a scheduled rule targets, by the rule's description naming the handler. */
  scheduled(handler: string): AssemblyFunction {
    const found = this.ofType('AWS::Events::Rule').find(([, r]) => String(r.Properties.Description).includes(handler));
    if (!found) throw new Error(`no schedule runs ${handler}`);
    return this.functionById(this.invoked(found[1].Properties.Targets[0].Arn));
  }

  /** The template function standing for a source handler of the route table. */
  resolve(fn: FunctionRef): AssemblyFunction {
    const route = routes.find((r) => r.handler === fn.handler);
    if (route) return this.method(route.api, route.method, route.path);
    if (fn.handler === authorizer.handler) return this.authorizer(fn.api!);
    if (fn.handler === fallback.handler) return this.method(fn.api!, 'ANY', '/{proxy+}');
    const worker = workers.find((w) => w.handler === fn.handler);
    if (worker) return this.queueConsumer(`${this.stackName}-${queues[worker.queue].name}${worker.deadLetters ? '-dlq' : ''}`);
    if (schedules.some((s) => s.handler === fn.handler)) return this.scheduled(fn.handler);
    const realtimeRoute = realtime.routes.find((r) => r.handler === fn.handler);
    if (realtimeRoute) return this.realtimeRoute(realtimeRoute.route);
    if (fn.handler === realtime.authorizer.handler) return this.realtimeAuthorizer();
    const consumer = streams.find((s) => s.handler === fn.handler);
    if (consumer) return this.streamConsumer(consumer.name);
    throw new Error(`no function for ${fn.handler}`);
  }

  /** The function's environment with the stack's resources replaced by local ones; an unknown reference throws. */
  environment(fn: AssemblyFunction, local: LocalResources): Record<string, string> {
    const resolve = (name: string, value: unknown): string => {
      if (typeof value === 'string') return value;
      const ref = (value as { Ref?: string }).Ref;
      const r = ref ? this.resources[ref] : undefined;
      if (r?.Type === 'AWS::DynamoDB::Table') return local.tableName;
      if (r?.Type === 'AWS::S3::Bucket' && local.filesBucket) return local.filesBucket;
      // The webhook key: locally secrets are sealed with WEBHOOK_SECRET_KEY instead (shared/util/sealing.ts).
      const getAtt = (value as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'];
      if (getAtt && this.resources[getAtt[0]]?.Type === 'AWS::KMS::Key') return '';
      if (r?.Type === 'AWS::SQS::Queue') {
        const url = local.queueUrls[r.Properties.QueueName];
        if (url) return url;
      }
      // The realtime stage's callback URL (a join over the WebSocket API's id): the local realtime server's.
      const joined = JSON.stringify((value as { 'Fn::Join'?: unknown })['Fn::Join'] ?? null);
      const api = [...joined.matchAll(/"Ref":"([^"]+)"/g)]
        .map((m) => this.resources[m[1]!])
        .find((x) => x?.Type === 'AWS::ApiGatewayV2::Api');
      if (api && local.realtimeEndpoint) return local.realtimeEndpoint;
      throw new Error(`${fn.logicalId}: cannot resolve ${name}=${JSON.stringify(value)} locally`);
    };
    return Object.fromEntries(Object.entries(fn.environment).map(([name, value]) => [name, resolve(name, value)]));
  }
}

/**
 * Runs template functions from their bundles, one invocation at a time, so
 * that each sees exactly the environment `environment` makes of its own
 * (adding what Lambda itself provides: region, endpoints, credentials), as
 * each function does on Lambda. Each function gets its own module instance,
 * even where two share a bundle.
 */
export function bundleInvoker(
  assembly: CloudAssembly,
  local: LocalResources,
  environment: (fn: AssemblyFunction, own: Record<string, string>) => Record<string, string>,
  onInvoke: (fn: AssemblyFunction) => void = () => undefined,
): Invoker {
  const handlers = new Map<string, Promise<(event: unknown, context: unknown) => Promise<unknown>>>();
  let turn: Promise<unknown> = Promise.resolve();
  return (ref, event) => {
    const fn = assembly.resolve(ref);
    const run = turn.then(async () => {
      let loaded = handlers.get(fn.logicalId);
      if (!loaded) {
        loaded = import(`${pathToFileURL(fn.file).href}?function=${fn.logicalId}`).then((m: Record<string, unknown>) => {
          const handler = m[fn.exportName];
          if (typeof handler !== 'function') throw new Error(`${fn.file} exports no ${fn.exportName}`);
          return handler as (event: unknown, context: unknown) => Promise<unknown>;
        });
        handlers.set(fn.logicalId, loaded);
      }
      const restore = { ...process.env };
      const own = assembly.environment(fn, local);
      for (const key of Object.keys(process.env)) delete process.env[key];
      Object.assign(process.env, environment(fn, own));
      try {
        onInvoke(fn);
        return await (
          await loaded
        )(event, lambdaContext(fn.logicalId, fn.timeoutSeconds));
      } finally {
        for (const key of Object.keys(process.env)) delete process.env[key];
        Object.assign(process.env, restore);
      }
    });
    turn = run.catch(() => undefined);
    return run;
  };
}
