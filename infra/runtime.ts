import { readFileSync } from 'node:fs';
import { Runtime } from 'aws-cdk-lib/aws-lambda';

/**
 * The Node.js major the Lambda functions run on. It is stated once, in
 * `.nvmrc`, because three things must agree on it: the Lambda runtime of every
 * function, the esbuild target of their bundles, and the Node that `.ci/run`
 * runs the test suite on (nvm users get the same Node locally). Why this
 * major: docs/testing.md, "Node versions".
 */
export const DEPLOY_NODE_MAJOR = parseMajor(readFileSync(new URL('../.nvmrc', import.meta.url), 'utf8'));

/** esbuild's name for the same Node, so bundles keep syntax that runtime has natively. */
export const ESBUILD_TARGET = `node${DEPLOY_NODE_MAJOR}`;

/** The Lambda runtime for a Node major; throws at synth when this aws-cdk-lib does not know it. */
export function lambdaRuntime(major: number = DEPLOY_NODE_MAJOR): Runtime {
  const name = `nodejs${major}.x`;
  // NODEJS_LATEST shares the name but may move with aws-cdk-lib upgrades: take the pinned one.
  const runtime = Runtime.ALL.find((r) => r.name === name && !r.isVariable);
  if (!runtime) throw new Error(`aws-cdk-lib has no Lambda runtime '${name}' (from .nvmrc); upgrade aws-cdk-lib or pick another major`);
  return runtime;
}

export function parseMajor(text: string): number {
  const trimmed = text.trim();
  if (!/^[1-9]\d*$/.test(trimmed)) throw new Error(`.nvmrc must hold a bare Node major such as 24, not '${trimmed}'`);
  return Number(trimmed);
}
