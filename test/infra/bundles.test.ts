import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');

/** A handler bundled with the stack's flags (BUNDLING in infra/functions.ts), in memory. */
async function bundle(handler: string) {
  const result = await build({
    entryPoints: [join(root, 'functions', `${handler}.ts`)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    minify: true,
    target: `node${readFileSync(join(root, '.nvmrc'), 'utf8').trim()}`,
    mainFields: ['module', 'main'],
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  return { code: result.outputFiles[0]!.text, inputs: Object.keys(result.metafile.inputs) };
}

/**
 * Every byte of a bundle and every schema built at import is paid on each cold
 * start (docs/performance.md): the handlers load zod/mini, and esbuild drops
 * the schemas of the other endpoints of the same API.
 */
describe('handler bundles', () => {
  // Which of these error messages a bundle carries: each stands for the schema that spells it.
  const found = (code: string, messages: string[]) => messages.filter((m) => code.includes(m));

  it('carry zod/mini and only the request schemas of their own endpoint', async () => {
    const messages = await bundle('messages/list');
    expect(messages.inputs.some((i) => i.includes('node_modules/zod/v4/mini/'))).toBe(true);
    expect(messages.inputs.filter((i) => i.includes('node_modules/zod/v4/classic/'))).toEqual([]);
    // Its own query (ids are "too long" past 64 characters), not the bodies of the other message and conversation endpoints.
    expect(found(messages.code, ['is too long'])).toEqual(['is too long']);
    const otherEndpoints = ['must be an https URL', 'must be a media type', 'reaction names are', 'must be true or false'];
    expect(found(messages.code, otherEndpoints)).toEqual([]);

    const emails = await bundle('emails/list');
    expect(emails.inputs.filter((i) => i.includes('node_modules/zod/v4/classic/'))).toEqual([]);
    expect(found(emails.code, ['must be a positive integer'])).toEqual(['must be a positive integer']);
    expect(found(emails.code, ['must contain at least one address', 'must be at most 200 characters'])).toEqual([]);
  });
});
