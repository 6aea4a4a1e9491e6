import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiServer, type RunningApi } from '../../scripts/local/http-server.ts';
import { docExamples, shapeDifferences, type DocExample } from '../steps/doc-examples.ts';
import { emailEnv, type EmailEnv } from '../steps/email-env.ts';
import { aTenant } from '../steps/given.ts';

/**
 * Every `bash runnable` example of the README and docs/ runs, as written,
 * against the local server over real sockets, a file's examples in order in
 * one shell (later examples use the ids earlier ones kept), with the
 * variables `source .local/env` would set and the demo DNS zones. Statuses
 * and the documented outputs are checked, so a changed response fails here.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const files = [
  'README.md',
  ...readdirSync(`${ROOT}docs`)
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const byFile = files
  .map((file) => [file, docExamples(file, readFileSync(`${ROOT}${file}`, 'utf8'))] as const)
  .filter(([, e]) => e.length > 0);
const run = promisify(execFile);

const END = '__example_end__';
const STATUS = '__status__';

/** One shell per file: each curl reports its status on stderr, each example ends with a marker on both streams. */
function shellScript(examples: readonly DocExample[]): string {
  return [
    `curl() { command curl --write-out '%{stderr}${STATUS} %{http_code}\\n' "$@"; }`,
    // The helper the messaging and email guides define in their setup block.
    `json_id() { node -pe 'JSON.parse(require("fs").readFileSync(0)).id'; }`,
    ...examples.map((e, i) => `${e.script}\necho; echo '${END} ${i}'; echo '${END} ${i}' >&2`),
  ].join('\n');
}

const split = (text: string, count: number) => {
  const parts = text.split(new RegExp(`^${END} \\d+$`, 'm'));
  return Array.from({ length: count }, (_, i) => parts[i] ?? '');
};

describe('documentation examples', { timeout: 120_000 }, () => {
  let messaging: RunningApi;
  let email: RunningApi;
  let env: EmailEnv | undefined;

  beforeAll(async () => {
    env = await emailEnv();
    [messaging, email] = await Promise.all([startApiServer('messaging', 0), startApiServer('email', 0)]);
  });

  /** What `source .local/env` sets after a fresh `npm start`: each file starts from its own new demo account. */
  async function demoVars() {
    const tenant = await aTenant();
    return {
      MESSAGING_BASE_URL: messaging.url,
      EMAIL_BASE_URL: email.url,
      DEMO_TOKEN: tenant.token,
      DEMO_TOKEN_2: tenant.token2,
      DEMO_CONTACT_ID: tenant.contactIds.bob,
      DEMO_GROUP_ID: tenant.groupId,
      DEMO_ACCOUNT_ID: tenant.accountId,
      DEMO_SECRET_KEY: tenant.secretKey,
    };
  }
  afterAll(async () => {
    await messaging?.close();
    await email?.close();
    await env?.stop();
  });

  it('finds runnable examples in the README and in the guides of both APIs', () => {
    const names = byFile.map(([file]) => file);
    for (const file of ['README.md', 'docs/messaging-api.md', 'docs/email-validation.md']) expect(names).toContain(file);
  });

  it.each(byFile)('%s: every example answers as documented', async (_file, examples) => {
    const { stdout, stderr } = await run('bash', ['-c', shellScript(examples)], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...(await demoVars()) },
      maxBuffer: 64 * 1024 * 1024,
    }).catch((error: { stdout: string; stderr: string; message: string }) => {
      throw new Error(`${error.message}\n${error.stderr}`);
    });
    const outputs = split(stdout, examples.length);
    const errors = split(stderr, examples.length);
    const problems = examples.flatMap((example, i) => {
      const where = `${example.file}:${example.line}`;
      const statuses = [...errors[i]!.matchAll(new RegExp(`^${STATUS} (\\d+)$`, 'gm'))].map((m) => Number(m[1]));
      const found: string[] = [];
      if (statuses.length === 0) found.push(`${where}: ran no curl (stderr: ${errors[i]!.trim()})`);
      if (example.statuses ? statuses.join() !== example.statuses.join() : statuses.some((s) => s < 200 || s > 299)) {
        found.push(`${where}: statuses ${statuses.join(',')}, documented ${example.statuses?.join(',') ?? '2xx'}\n${outputs[i]!.trim()}`);
      }
      if (example.output !== undefined) {
        let actual: unknown;
        try {
          actual = JSON.parse(outputs[i]!);
        } catch {
          return [...found, `${where}: output is not one JSON document: ${outputs[i]!.trim().slice(0, 500)}`];
        }
        found.push(...shapeDifferences(example.output, actual).map((d) => `${where}: ${d}`));
      }
      return found;
    });
    expect(problems).toEqual([]);
  });
});
