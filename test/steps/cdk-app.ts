import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { App, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll } from 'vitest';
import { authorizer, fallback, realtime, routes, schedules, streams, workers } from '../../shared/routes.ts';
import { MessagingAndEmailValidationStack } from '../../infra/stack.ts';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const handlers = [
  ...routes.map((r) => r.handler),
  authorizer.handler,
  fallback.handler,
  ...workers.map((w) => w.handler),
  ...schedules.map((s) => s.handler),
  ...streams.map((s) => s.handler),
  realtime.authorizer.handler,
  ...realtime.routes.map((r) => r.handler),
];

// Bundling is skipped, but NodejsFunction still requires each entry to exist
// under the project root: use the real functions/ when complete, stubs in an
// untracked temporary directory inside the repo otherwise.
let stubDir: string | undefined;
export function functionsDir(): string {
  const real = path.join(repoRoot, 'functions');
  if (handlers.every((h) => fs.existsSync(path.join(real, `${h}.ts`)))) return real;
  if (stubDir) return stubDir;
  const cache = path.join(repoRoot, 'node_modules', '.cache');
  fs.mkdirSync(cache, { recursive: true });
  stubDir = fs.mkdtempSync(path.join(cache, 'infra-test-functions-'));
  for (const h of handlers) {
    fs.mkdirSync(path.dirname(path.join(stubDir, h)), { recursive: true });
    fs.writeFileSync(path.join(stubDir, `${h}.ts`), 'export const handler = async () => ({});\n');
  }
  afterAll(() => {
    if (stubDir) fs.rmSync(stubDir, { recursive: true, force: true });
  });
  return stubDir;
}

/** Same feature flags as `cdk synth`, so the template under test is the deployed one. */
export const cdkContext: Record<string, unknown> = JSON.parse(fs.readFileSync(path.join(repoRoot, 'cdk.json'), 'utf8')).context ?? {};

/** An app with cdk.json's flags plus `context` (deploy settings), bundling skipped. */
export const testApp = (context: Record<string, unknown> = {}, outdir?: string) =>
  new App({ context: { ...cdkContext, 'aws:cdk:bundling-stacks': [], ...context }, outdir });

/** The stack under `context`, and its template. */
export function synthStack(context: Record<string, unknown> = {}, id = 'TestStack') {
  const stack = new MessagingAndEmailValidationStack(testApp(context), id, { stackName: 'test-stack', functionsDir: functionsDir() });
  return { stack, template: Template.fromStack(stack) };
}

export const logicalIdOf = (stack: MessagingAndEmailValidationStack, c: { node: { defaultChild?: unknown } }) =>
  stack.getLogicalId(c.node.defaultChild as CfnElement);
