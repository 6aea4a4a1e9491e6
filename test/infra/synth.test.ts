import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { routes } from '#shared/routes';
import { DEPLOY_NODE_MAJOR } from '../../infra/runtime.ts';

const run = promisify(execFile);

/** The real `cdk synth`, bundling every function with esbuild, with no AWS credentials at all. */
describe('cdk synth', () => {
  const out = mkdtempSync(join(tmpdir(), 'cdk-out-'));
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('synthesizes and bundles every handler as an ESM bundle for the Node major of .nvmrc, without credentials', async () => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_')));
    await run('npx', ['cdk', 'synth', '--quiet', '--output', out], {
      env: { ...env, CDK_DISABLE_VERSION_CHECK: '1', AWS_EC2_METADATA_DISABLED: 'true' },
      timeout: 240_000,
    });
    const template = JSON.parse(readFileSync(join(out, 'ServerlessMessagingStack.template.json'), 'utf8'));
    type Resource = { Type: string; Properties: { Runtime?: string } };
    const functions = Object.values(template.Resources as Record<string, Resource>).filter(
      (r) => r.Type === 'AWS::Lambda::Function',
    );
    expect(functions.length).toBeGreaterThanOrEqual(routes.length);
    expect(new Set(functions.map((f) => f.Properties.Runtime))).toEqual(new Set([`nodejs${DEPLOY_NODE_MAJOR}.x`]));
    const bundles = readdirSync(out).filter((d) => d.startsWith('asset.'));
    expect(bundles.length).toBeGreaterThanOrEqual(routes.length);
    for (const dir of bundles) {
      const files = readdirSync(join(out, dir));
      const entry = files.find((f) => f === 'index.mjs' || f === 'index.js');
      if (!entry) continue;
      const code = readFileSync(join(out, dir, entry), 'utf8');
      expect(code).toMatch(/export\s*\{/); // ESM: Lambda imports `handler` from the bundle
    }
  }, 300_000);
});
