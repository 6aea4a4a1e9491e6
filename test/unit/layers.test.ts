import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/** Each import of a file: what it names, and whether it is for types only. */
const importsOf = (file: string) =>
  [...readFileSync(join(root, file), 'utf8').matchAll(/^import (type )?[^'"]*?from '([^']+)'/gms)].map((m) => ({
    from: m[2]!,
    typeOnly: m[1] !== undefined,
  }));

/** The files of `dirs` that import what `forbidden` matches, as `file -> import`. */
const offenders = (dirs: string[], forbidden: (imported: { from: string; typeOnly: boolean }) => boolean) =>
  dirs.flatMap(sources).flatMap((file) =>
    importsOf(file)
      .filter(forbidden)
      .map((i) => `${relative(root, join(root, file))} -> ${i.from}`),
  );

describe('layers point one way: handlers → http → domain → data → db', () => {
  it('finds the imports it checks (a check that reads nothing cannot fail)', () => {
    expect(importsOf('shared/data/emails.ts').some((i) => i.from === '#shared/db/keys')).toBe(true);
    expect(importsOf('shared/data/emails.ts').some((i) => i.from === '#shared/email/result' && i.typeOnly)).toBe(true);
  });

  it('keeps HTTP out of the domain, the data layer and the utilities', () => {
    // Given every module under shared/ that is not the HTTP layer
    const dirs = ['shared/data', 'shared/db', 'shared/email', 'shared/messaging', 'shared/util'];
    const topLevel = readdirSync(join(root, 'shared'))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => join('shared', f));
    // Then none imports shared/http (domain errors are mapped to HTTP by its error middleware)
    expect(offenders(dirs, (i) => i.from.startsWith('#shared/http'))).toEqual([]);
    expect(
      topLevel.flatMap((file) =>
        importsOf(file)
          .filter((i) => i.from.startsWith('#shared/http'))
          .map((i) => `${file} -> ${i.from}`),
      ),
    ).toEqual([]);
  });

  it('keeps the domain out of the data layer (its pure result types aside)', () => {
    expect(offenders(['shared/data', 'shared/db'], (i) => /^#shared\/(email|messaging|http)\b/.test(i.from) && !i.typeOnly)).toEqual([]);
  });

  it('keeps handlers out of shared code', () => {
    expect(offenders(['shared'], (i) => i.from.startsWith('#functions') || i.from.includes('/functions/'))).toEqual([]);
  });
});

describe('bundles take the tree-shakable zod', () => {
  /** Every zod module a file names, in an import, a re-export or a dynamic import. */
  const zodModules = (file: string) =>
    [...readFileSync(join(root, file), 'utf8').matchAll(/['"](zod(?:\/[\w./-]*)?)['"]/g)].map((m) => m[1]!);

  it('finds the zod imports it checks', () => {
    expect(zodModules('shared/data/emails.ts')).toContain('zod/mini');
    expect(importsOf('shared/http/validation.ts')).toContainEqual({ from: 'zod/mini', typeOnly: true });
  });

  it('imports zod/mini only (zod/v4/core for types), never classic zod, in shared code and handlers', () => {
    // Classic zod ('zod') cannot be tree-shaken: ~99 KiB in every handler bundle that reaches it, paid at each cold start.
    const files = ['shared', 'functions'].flatMap(sources);
    const named = files.flatMap((file) => zodModules(file).map((from) => `${file} -> ${from}`));
    expect(named.filter((n) => !n.endsWith(' -> zod/mini') && !n.endsWith(' -> zod/v4/core'))).toEqual([]);
    expect(offenders(['shared', 'functions'], (i) => i.from === 'zod/v4/core' && !i.typeOnly)).toEqual([]);
  });
});
