/**
 * Without Java on PATH, `npm start` must say what to install rather than
 * fail with a spawn ENOENT. No mocks: PATH simply points at an empty directory.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { assertJava } from '../../scripts/local/dynamodb.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const noJava = mkdtempSync(join(tmpdir(), 'no-java-'));
const INSTALL_HINT = /Java runtime[\s\S]*apt-get install -y openjdk-17-jre-headless[\s\S]*brew install openjdk@17/;

afterAll(() => rmSync(noJava, { recursive: true, force: true }));

describe('Java check', () => {
  it('assertJava names the packages to install when java is not on PATH', () => {
    const path = process.env.PATH;
    process.env.PATH = noJava;
    try {
      expect(() => assertJava()).toThrow(INSTALL_HINT);
    } finally {
      process.env.PATH = path;
    }
  });

  it('npm start prints that message and exits 1', async () => {
    const child = spawn(process.execPath, [join(ROOT, 'node_modules/tsx/dist/cli.mjs'), 'scripts/start.ts'], {
      cwd: ROOT,
      env: { PATH: noJava, HOME: process.env.HOME, LOCAL_DIR: join(noJava, 'local'), LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect(code).toBe(1);
    expect(stderr).toMatch(/npm start failed: DynamoDB Local needs a Java runtime/);
    expect(stderr).toMatch(INSTALL_HINT);
  });
});
