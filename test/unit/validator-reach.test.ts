import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/*
 * What each handler's bundle evaluates at import: the modules it reaches
 * through static imports and re-exports. A dynamic `import()` is not
 * followed: esbuild gives it a chunk of its own that loads when it runs.
 */

const root = join(import.meta.dirname, '..', '..');

const handlers = (dir = 'functions'): string[] =>
  readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? handlers(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );

/** A file's static imports that carry values (type-only ones are erased). */
const staticImports = (file: string) =>
  [...readFileSync(join(root, file), 'utf8').matchAll(/^(?:import|export)\s+(type\s+)?(?:[^\s'";][^'";]*?\sfrom\s+)?'([^']+)'/gm)]
    .filter((m) => m[1] === undefined)
    .map((m) => m[2]!);

function resolve(from: string, specifier: string): { file: string } | { pkg: string } {
  if (specifier.startsWith('#')) return { file: `${specifier.slice(1)}.ts` };
  if (specifier.startsWith('.')) return { file: relative(root, join(root, dirname(from), specifier)) };
  return { pkg: specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]! };
}

/** Every file and package a handler reaches. */
function reach(handler: string) {
  const files = new Set([handler]);
  const packages = new Set<string>();
  for (const file of files) {
    for (const specifier of staticImports(file)) {
      const target = resolve(file, specifier);
      if ('pkg' in target) packages.add(target.pkg);
      else if (existsSync(join(root, target.file))) files.add(target.file);
      else throw new Error(`${file}: cannot resolve '${specifier}'`);
    }
  }
  return { files: [...files], packages: [...packages] };
}

const all = handlers().map((handler) => ({ handler: handler.replace(/^functions\/|\.ts$/g, ''), ...reach(handler) }));
const validatorFiles = (files: string[]) => files.filter((f) => f.startsWith('shared/email/validator/')).sort();

describe('what the handlers load at import', () => {
  it('follows imports, re-exports and path aliases (a check that reads nothing cannot fail)', () => {
    const create = all.find((h) => h.handler === 'emails/create')!;
    expect(create.files).toContain('shared/email/validator/validate.ts');
    expect(create.files).toContain('shared/email/validator/mail-domain.ts');
    expect(create.packages).toContain('@middy/core');
  });

  it('only the validating handlers reach the validator; the readers and the dead-letter worker do not', () => {
    expect(all.filter((h) => validatorFiles(h.files).length > 0).map((h) => h.handler)).toEqual([
      'email-lists/add',
      'emails/create',
      'webhook-endpoints/create',
      'webhook-endpoints/update',
      'workers/deliver-webhooks',
      // The purge worker's imports check their rows' syntax in the import's run, loaded by its first import (shared/email/list-import.ts).
      'workers/validate-emails',
    ]);
  });

  it('webhook delivery and the endpoints that take a URL load only the address policy (their SSRF guard)', () => {
    for (const handler of ['workers/deliver-webhooks', 'webhook-endpoints/create', 'webhook-endpoints/update']) {
      const found = all.find((h) => h.handler === handler)!;
      expect(validatorFiles(found.files), handler).toEqual(['shared/email/validator/address-policy.ts']);
    }
  });

  it('adding to a list loads only the syntax check', () => {
    const add = all.find((h) => h.handler === 'email-lists/add')!;
    expect(validatorFiles(add.files)).toEqual(['shared/email/validator/idna.ts', 'shared/email/validator/syntax.ts']);
  });

  it('no handler imports the validator’s heavy data statically: it is loaded on first use', () => {
    for (const { handler, files, packages } of all) {
      expect({ handler, heavy: packages.filter((p) => ['tr46', 'tldts', 'socks', 'mailchecker', 'email-providers'].includes(p)) }).toEqual({
        handler,
        heavy: [],
      });
      expect(files).not.toContain('shared/email/validator/domain-lists.generated.ts');
    }
  });
});
