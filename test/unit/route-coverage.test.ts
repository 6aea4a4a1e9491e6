import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { routes } from '#shared/routes';

const root = join(import.meta.dirname, '..', '..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');

/**
 * `${listId}`, `{conv}`, `{file}` and the like all stand for the route's `{id}`, except `${importId}`, the second id of an
 * import's path; a query string is no part of the route.
 */
const template = (path: string) =>
  path
    .split('?')[0]!
    .replace(/\$\{importId\}/g, '{importId}')
    .replace(/\$\{[^}]+\}|\{(conv|msg|file)\}/g, '{id}');

/**
 * The routes a tenancy file exercises as the intruder: its table of attempts
 * (`['PUT', '/v1/…/{conv}'` or `['GET', () => \`/api/v1/…/${id}\``) and its
 * direct calls made with the intruder's token.
 */
function exercised(file: string): Set<string> {
  const text = read(file);
  const found = [
    ...text.matchAll(/\['(GET|POST|PUT|DELETE)', '([^']+)'/g),
    ...text.matchAll(/\['(GET|POST|PUT|DELETE)', \(\) => `([^`]+)`/g),
    ...text.matchAll(/api\.call\('(GET|POST|PUT|DELETE)', [`']([^`']+)[`'], \{ token: intruder\.token/g),
  ];
  return new Set(found.map((m) => `${m[1]} ${template(m[2]!)}`));
}

describe('every route is covered where a reader expects it', () => {
  it('has a tenancy case for every route (another account, and for messaging another user)', () => {
    // Given what the tenancy files try as an intruder
    const covered = new Set(
      ['test/e2e/tenancy.test.ts', 'test/e2e/email-tenancy.test.ts', 'test/e2e/platform-tenancy.test.ts'].flatMap((f) => [...exercised(f)]),
    );
    // Then every route of the table is among them: a new route without a tenancy case fails here
    const missing = routes.map((r) => `${r.method} ${r.path}`).filter((route) => !covered.has(route));
    expect(missing).toEqual([]);
  });

  it('has an OpenAPI operation for every route', () => {
    const doc = parse(read('docs/openapi.yaml')) as { paths: Record<string, Record<string, unknown>> };
    const missing = routes.filter((r) => !doc.paths[r.path]?.[r.method.toLowerCase()]).map((r) => `${r.method} ${r.path}`);
    expect(missing).toEqual([]);
  });
});
