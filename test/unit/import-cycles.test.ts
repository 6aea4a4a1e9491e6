import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/** The project files a file imports at load (static imports and re-exports, types included: they still tie the modules together). */
function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  return [...text.matchAll(/^(?:import|export)\s[^'"]*?from\s+'([^']+)'/gm)]
    .map((m) => m[1]!)
    .map((spec) =>
      spec.startsWith('#shared/')
        ? `shared/${spec.slice('#shared/'.length)}.ts`
        : spec.startsWith('#functions/')
          ? `functions/${spec.slice('#functions/'.length)}.ts`
          : spec.startsWith('.')
            ? relative(root, resolve(root, dirname(file), spec))
            : undefined,
    )
    .filter((p): p is string => p !== undefined && existsSync(join(root, p)));
}

/** Every cycle found by a depth-first walk, as `a -> b -> a`. */
function cycles(files: string[]): string[] {
  const found: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const walk = (file: string, path: string[]) => {
    if (state.get(file) === 'done') return;
    if (state.get(file) === 'open') {
      found.push([...path.slice(path.indexOf(file)), file].join(' -> '));
      return;
    }
    state.set(file, 'open');
    for (const next of importsOf(file)) walk(next, [...path, file]);
    state.set(file, 'done');
  };
  for (const file of files) walk(file, []);
  return found;
}

describe('imports form no cycle', () => {
  it('finds a cycle when there is one (a check that cannot fail proves nothing)', () => {
    expect(importsOf('infra/stack.ts')).toContain('infra/nag.ts');
    expect(importsOf('functions/auth/authorizer.ts')).toContain('shared/data/tokens.ts');
  });

  it('in the stack, the shared code, the handlers, the scripts and the benches', () => {
    const files = ['infra', 'shared', 'functions', 'scripts', 'bench'].flatMap(sources);
    expect(cycles(files)).toEqual([]);
  });
});
