import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

/**
 * The TypeScript client (clients/typescript) runs in browsers as well as in
 * Node: it type-checks against the browser's library without Node's types,
 * bundles for the browser platform (where a Node built-in cannot be
 * resolved), and its source names none of Node's globals.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const CLIENT = join(ROOT, 'clients', 'typescript');
const sources = readdirSync(CLIENT).filter((f) => f.endsWith('.ts'));

describe('the TypeScript client in a browser', () => {
  it('bundles as ESM for the browser, with nothing of Node in it', async () => {
    // Given the client's entry point, when esbuild bundles it for browsers, then it succeeds without a warning
    const result = await build({
      entryPoints: [join(CLIENT, 'index.ts')],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      logLevel: 'silent',
    });
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual([]);
    expect(result.outputFiles[0]!.text).toMatch(/export \{[^}]*connectRealtime/);
  });

  it(
    "type-checks with the browser's library and no Node types, in TypeScript that only erases (Node runs it as is)",
    { timeout: 60_000 },
    async () => {
      // clients/typescript/tsconfig.json: lib DOM, types [], erasableSyntaxOnly; a failure's diagnostics are the stdout
      const result = await promisify(execFile)(join(ROOT, 'node_modules', '.bin', 'tsc'), ['-p', CLIENT], { cwd: ROOT }).catch(
        (error: { stdout?: string }) => ({ stdout: error.stdout ?? String(error) }),
      );
      expect(result.stdout).toBe('');
    },
  );

  it(
    'type-checks as an app takes it: the folder copied elsewhere, with only openapi-fetch installed beside it',
    { timeout: 60_000 },
    async () => {
      // Given the folder copied into an app of its own, whose node_modules holds openapi-fetch (and the tsc the app uses)
      const app = mkdtempSync(join(tmpdir(), 'client-app-'));
      try {
        cpSync(CLIENT, join(app, 'client'), { recursive: true });
        mkdirSync(join(app, 'node_modules'));
        symlinkSync(join(ROOT, 'node_modules', 'openapi-fetch'), join(app, 'node_modules', 'openapi-fetch'));
        symlinkSync(join(ROOT, 'node_modules', 'openapi-typescript-helpers'), join(app, 'node_modules', 'openapi-typescript-helpers'));
        // When it is checked with its own tsconfig.json: then it passes, nothing of this repository needed
        const result = await promisify(execFile)(join(ROOT, 'node_modules', '.bin', 'tsc'), ['-p', 'client'], { cwd: app }).catch(
          (error: { stdout?: string }) => ({ stdout: error.stdout ?? String(error) }),
        );
        expect(result.stdout).toBe('');
      } finally {
        rmSync(app, { recursive: true, force: true });
      }
    },
  );

  it('imports no Node module and uses no Node global', () => {
    expect(sources).toContain('realtime.ts');
    for (const file of sources) {
      const text = readFileSync(join(CLIENT, file), 'utf8');
      expect(text, file).not.toMatch(/from ['"]node:|require\(|\bprocess\.|\bBuffer\b|__dirname/);
    }
  });

  it('imports only its own files and openapi-fetch, so an app can take the folder as it is', () => {
    const imports = sources.flatMap((file) =>
      [...readFileSync(join(CLIENT, file), 'utf8').matchAll(/^(?:import|export) [^'"]*?from '([^']+)'/gm)].map((m) => m[1]!),
    );
    expect(imports).toContain('openapi-fetch');
    expect(imports.filter((from) => from !== 'openapi-fetch' && !/^\.\/[\w.-]+\.ts$/.test(from))).toEqual([]);
  });
});
