import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEPLOY_NODE_MAJOR } from '../../infra/runtime.ts';
import { DEFAULT_AUTH_CACHE_SECONDS, DEFAULT_THROTTLE } from '../../infra/settings.ts';
import { DEFAULT_ACCOUNT_LIMITS } from '#shared/rate-limits';
import { MEMORY_MB } from '#shared/routes';

const root = join(import.meta.dirname, '..', '..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');
const docs = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md') || f.endsWith('.yaml'))
    .map((f) => `docs/${f}`),
];
/** Text with line breaks and Markdown emphasis folded, so a phrase wrapped across lines still matches. */
const prose = (file: string) => read(file).replace(/\s+/g, ' ').replaceAll('**', '');

/**
 * Figures the documents state about the code, read from the code: a document
 * that drifts from the stack (a runtime, a cache, a limit) fails here.
 */
describe('the documents agree with the code', () => {
  it('reads every document it checks', () => {
    expect(docs).toEqual(expect.arrayContaining(['README.md', 'docs/architecture.md', 'docs/operations.md', 'docs/openapi.yaml']));
  });

  it('name the Lambda runtime of .nvmrc', () => {
    expect(prose('docs/architecture.md')).toContain(`Node.js ${DEPLOY_NODE_MAJOR} (\`nodejs${DEPLOY_NODE_MAJOR}.x\`)`);
    expect(prose('README.md')).toContain(`(Node ${DEPLOY_NODE_MAJOR}, the Lambda runtime's major in \`.nvmrc\``);
    expect(prose('docs/testing.md')).toContain(`the major in \`.nvmrc\` (${DEPLOY_NODE_MAJOR})`);
    expect(prose('docs/performance.md')).toContain(`\`nodejs${DEPLOY_NODE_MAJOR}.x\``);
  });

  it('give the oldest Node that engines in package.json accepts', () => {
    const floor = /^>=(\d+\.\d+)$/.exec(JSON.parse(read('package.json')).engines.node)?.[1];
    expect(floor).toEqual(expect.any(String));
    expect(prose('README.md')).toContain(`You need Node.js ≥ ${floor} `);
    expect(prose('docs/running-locally.md')).toContain(`accepts it (≥ ${floor})`);
    expect(prose('docs/testing.md')).toContain(`any Node ≥ ${floor};`);
    expect(prose('docs/testing.md')).toContain(`### Why Node ${floor} is the floor`);
  });

  it('say the authorizer answer is cached AUTH_CACHE_SECONDS, never that it is not cached', () => {
    for (const file of docs) {
      const text = prose(file);
      expect(text, file).not.toMatch(
        /authorizer[^.]*(not cached|no cache|does not cache)|(results|answers) are not cached|no authorizer result cache|TTL 0\)/i,
      );
    }
    for (const file of ['docs/architecture.md', 'docs/data-model.md', 'docs/operations.md', 'docs/performance.md']) {
      expect(prose(file), file).toContain('AUTH_CACHE_SECONDS');
    }
    expect(prose('docs/architecture.md')).toContain(`cached AUTH_CACHE_SECONDS (${DEFAULT_AUTH_CACHE_SECONDS} by default)`);
  });

  it('state the default limits the stack deploys', () => {
    const { rateLimit, burstLimit } = DEFAULT_ACCOUNT_LIMITS;
    expect(prose('docs/api-conventions.md')).toContain(`by default ${rateLimit} requests/s with bursts of ${burstLimit}`);
    expect(prose('docs/operations.md')).toContain(`by default ${rateLimit} requests/s with bursts of ${burstLimit}`);
    expect(prose('docs/operations.md')).toContain(
      `${DEFAULT_THROTTLE.rateLimit} requests/s steady, bursts of ${DEFAULT_THROTTLE.burstLimit}`,
    );
    expect(prose('docs/openapi.yaml')).toContain(`by default ${rateLimit} requests per second with bursts of ${burstLimit}`);
    expect(prose('docs/architecture.md')).toContain(`${rateLimit} req/s, burst ${burstLimit} by default, across both APIs`);
    expect(prose('docs/architecture.md')).toContain(`${MEMORY_MB} MB`);
  });

  it('cite only source files that exist', () => {
    const cited = docs.flatMap((file) =>
      [...read(file).matchAll(/\b((?:shared|scripts|infra|functions|bench|test)\/[\w./-]+\.ts)\b/g)].map((m) => ({ file, path: m[1]! })),
    );
    expect(cited.length).toBeGreaterThan(20);
    expect(cited.filter(({ path }) => !existsSync(join(root, path))).map(({ file, path }) => `${file}: ${path}`)).toEqual([]);
  });
});
