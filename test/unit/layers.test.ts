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
  [...readFileSync(join(root, file), 'utf8').matchAll(/^import (type )?[^'"]*?from '([^']+)'/gm)].map((m) => ({
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
    const dirs = readdirSync(join(root, 'shared'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && entry.name !== 'http')
      .map((entry) => join('shared', entry.name));
    expect(dirs).toEqual(expect.arrayContaining(['shared/jobs', 'shared/stream', 'shared/messaging', 'shared/routes', 'shared/util']));
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
    expect(
      offenders(
        ['shared/data', 'shared/db'],
        (i) => /^#shared\/(email|messaging|platform|http|jobs|purge|stream|events|realtime|webhooks)\b/.test(i.from) && !i.typeOnly,
      ),
    ).toEqual([]);
  });

  it("keeps the change stream's consumers apart: each imports the stream, none another consumer", () => {
    // Given the stream (shared/stream) and its consumers, the events feeds' writer, webhooks and realtime, with their stream workers
    const consumers = {
      events: ['shared/events', 'functions/workers/event-feed.ts'],
      webhooks: ['shared/webhooks', 'functions/workers/webhook-events.ts', 'functions/workers/deliver-webhooks.ts'],
      realtime: ['shared/realtime', 'functions/workers/realtime-events.ts'],
    };
    const files = (paths: string[]) => paths.flatMap((p) => (p.endsWith('.ts') ? [p] : sources(p)));
    const importing = (paths: string[], pattern: RegExp) =>
      files(paths).flatMap((file) =>
        importsOf(file)
          .filter((i) => pattern.test(i.from))
          .map((i) => `${file} -> ${i.from}`),
      );
    // Then neither consumer imports the other, and the stream imports neither
    expect(importing(consumers.webhooks, /^#shared\/(realtime|events)\//)).toEqual([]);
    expect(importing(consumers.realtime, /^#shared\/(webhooks|events)\//)).toEqual([]);
    expect(importing(consumers.events, /^#shared\/(webhooks|realtime)\//)).toEqual([]);
    expect(importing(['shared/stream'], /^#shared\/(webhooks|realtime|events)\//)).toEqual([]);
    // And both read the stream through it (a check that reads nothing cannot fail)
    expect(importing(['functions/workers/realtime-events.ts'], /^#shared\/stream\//)).not.toEqual([]);
    expect(importing(['shared/webhooks'], /^#shared\/stream\//)).not.toEqual([]);
    expect(importing(['shared/events'], /^#shared\/stream\//)).not.toEqual([]);
  });

  it('keeps the route table to its own rows: the stack, the local server and the fallback function load nothing else with it', () => {
    // Given the table (shared/routes.ts) and its rows (shared/routes/)
    const table = ['shared/routes.ts', ...sources('shared/routes')];
    expect(table.length).toBeGreaterThan(2);
    // Then each imports only other modules of the table (route.ts names the queues through a type, which loads nothing)
    const own = (from: string) => from === '#shared/routes' || from.startsWith('#shared/routes/');
    expect(
      table.flatMap((file) =>
        importsOf(file)
          .filter((i) => !own(i.from))
          .map((i) => `${file} -> ${i.from}`),
      ),
    ).toEqual([]);
  });

  it('keeps handlers out of shared code', () => {
    expect(offenders(['shared'], (i) => i.from.startsWith('#functions') || i.from.includes('/functions/'))).toEqual([]);
  });
});

describe('request and item schemas are valibot', () => {
  /** Every zod module a source names, in an import, a re-export or a dynamic import. */
  const zodModulesIn = (code: string) => [...code.matchAll(/['"](zod(?:\/[\w./-]*)?)['"]/g)].map((m) => m[1]!);
  const zodModules = (file: string) => zodModulesIn(readFileSync(join(root, file), 'utf8'));

  it('finds the schema imports it checks', () => {
    expect(importsOf('shared/http/validation.ts')).toContainEqual({ from: 'valibot', typeOnly: false });
    expect(zodModulesIn(`import * as z from 'zod/mini'; export { z } from "zod"; await import('zod/v4/core');`)).toEqual([
      'zod/mini',
      'zod',
      'zod/v4/core',
    ]);
  });

  it('imports no zod in shared code or handlers', () => {
    // zod's schema objects run class constructors as they are built: ~14% of a cold import before a request
    // arrives (docs/performance.md). valibot's are plain objects, and esbuild drops those a handler never uses.
    const files = ['shared', 'functions'].flatMap(sources);
    expect(files.flatMap((file) => zodModules(file).map((from) => `${file} -> ${from}`))).toEqual([]);
  });
});
