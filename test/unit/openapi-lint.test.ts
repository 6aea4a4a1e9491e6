import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * docs/openapi.yaml passes both linters clean: Redocly (recommended rules,
 * redocly.yaml) and Spectral (spectral:oas, .spectral.yaml). Each rule
 * switched off is switched off in that config, with its reason. Both run
 * from node_modules, offline.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
const bin = (name: string) => `${ROOT}node_modules/.bin/${name}`;
const offline = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };

/** The command's stdout whatever its exit code: a linter exits non-zero when it finds something. */
async function stdoutOf(command: string, args: string[]): Promise<string> {
  try {
    return (await run(command, args, { cwd: ROOT, env: offline, maxBuffer: 16 * 1024 * 1024 })).stdout;
  } catch (error) {
    return (error as { stdout?: string }).stdout ?? String(error);
  }
}

describe('the OpenAPI document under its linters', { timeout: 60_000 }, () => {
  it('has no Redocly error or warning', async () => {
    const report = JSON.parse(await stdoutOf(bin('redocly'), ['lint', 'docs/openapi.yaml', '--format=json']));
    expect(report.problems.map((p: { ruleId: string; message: string }) => `${p.ruleId}: ${p.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it('has no Spectral finding of any severity', async () => {
    const results = JSON.parse(
      await stdoutOf(bin('spectral'), ['lint', 'docs/openapi.yaml', '--format=json', '--fail-severity=hint', '--quiet']),
    );
    expect(results.map((r: { code: string; message: string; path: string[] }) => `${r.code} at ${r.path.join('.')}: ${r.message}`)).toEqual(
      [],
    );
  });
});
