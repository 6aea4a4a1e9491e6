import { join, relative } from 'node:path';
import { buildSync, type Metafile } from 'esbuild';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { authorizer, fallback, routes, schedules, workers } from '#shared/routes';
import { BUNDLING } from '../../infra/bundle.ts';
import { repoRoot } from '../steps/cdk-app.ts';

/**
 * What each function's cold start reads (docs/performance.md, "Cold start"):
 * the bundles are built as the stack builds them, and their esbuild metafile
 * says which source files land in the entry and in the chunks it imports
 * statically (read at init), and which only in chunks a dynamic import()
 * loads on first use.
 */
interface Contents {
  /** Inputs of the files Node reads when it imports the function. */
  eager: string[];
  /** Inputs of every file of the bundle, lazy chunks included. */
  all: string[];
  /** The code of every file of the bundle. */
  code: string;
  /** The code of the files Node reads when it imports the function. */
  eagerCode: string;
  /** Bundled modules that import node:stream/web (or stream/web). */
  webStreamImporters: string[];
}

function contentsOf(handler: string): Contents {
  const outdir = join(repoRoot, 'cdk.out', 'bundle-test', handler); // nothing is written: write: false
  const result = buildSync({
    ...BUNDLING,
    entryPoints: { index: join(repoRoot, 'functions', `${handler}.ts`) },
    outdir,
    metafile: true,
    write: false,
  });
  const outputs = (result.metafile as Metafile).outputs;
  const entry = Object.keys(outputs).find((o) => o.endsWith('/index.mjs'))!;
  const eager = new Set<string>();
  const visit = (o: string) => {
    if (eager.has(o)) return;
    eager.add(o);
    for (const i of outputs[o]!.imports) if (i.kind === 'import-statement' && outputs[i.path]) visit(i.path);
  };
  visit(entry);
  const inputsOf = (os: Iterable<string>) => [...os].flatMap((o) => Object.keys(outputs[o]!.inputs));
  const files = result.outputFiles.filter((f) => f.path.endsWith('.mjs'));
  const eagerFiles = files.filter((f) => eager.has(relative(process.cwd(), f.path)));
  return {
    eager: inputsOf(eager),
    all: inputsOf(Object.keys(outputs).filter((o) => o.endsWith('.mjs'))),
    code: files.map((f) => f.text).join('\n'),
    eagerCode: eagerFiles.map((f) => f.text).join('\n'),
    webStreamImporters: Object.entries(result.metafile!.inputs)
      .filter(([, input]) => input.imports.some((i) => /^(node:)?stream\/web$/.test(i.original ?? '')))
      .map(([name]) => name),
  };
}

const functions = [
  ...routes.map((r) => ({ handler: r.handler, validates: r.validates ?? false, table: r.table, reads: r.method === 'GET' })),
  { handler: authorizer.handler, validates: false, table: authorizer.table, reads: false },
  { handler: fallback.handler, validates: false, table: undefined, reads: false },
  ...workers.map((w) => ({ handler: w.handler, validates: w.validates ?? false, table: w.table, reads: false })),
  ...schedules.map((s) => ({ handler: s.handler, validates: false, table: s.table, reads: false })),
];

const run = promisify(execFile);

/** Loaded by the first validation (tr46 by the first internationalized domain, which adding to a list may meet too). */
const HEAVY_DATA = /node_modules\/(tr46|punycode|tldts|tldts-core|mailchecker|email-providers)\/|domain-lists\.generated/;

const matching = (inputs: string[], pattern: RegExp) => [...new Set(inputs.filter((i) => pattern.test(i)))];

/**
 * Code few requests need: the form parser loads with the first form body, the
 * SOCKS client with the first probe through a proxy, the mailbox probe
 * (SMTP dialog and verdicts) with the first validation under SMTP_PROBE=rcpt,
 * Powertools Metrics with the first invocation that records a metric, the
 * SQS client with the first message sent, the CSV parser with the first
 * import file read.
 */
const RARELY_NEEDED =
  /node_modules\/(qs|side-channel|object-inspect|get-intrinsic|socks|ip-address|smart-buffer|@aws-lambda-powertools\/metrics|@aws-sdk\/client-sqs|@aws-sdk\/middleware-sdk-sqs|csv-parse)\/|validator\/(mailbox-probe|mailbox-verdict|smtp-dialog)\.ts/;

describe.each(functions)('the bundle of $handler', ({ handler, table, validates, reads }) => {
  const contents = contentsOf(handler);

  it('reads no rarely needed code at init', () => {
    expect(matching(contents.eager, RARELY_NEEDED)).toEqual([]);
  });

  it("reads none of the validator's heavy data at init (domain lists, Public Suffix List, IDNA tables)", () => {
    expect(matching(contents.eager, HEAVY_DATA)).toEqual([]);
  });

  it.runIf(!validates)("carries the validator's heavy data only if it validates", () => {
    expect(
      // Adding addresses (to a list, or from an import's rows on the purge queue) checks their syntax, IDNA included.
      matching(contents.all, HEAVY_DATA).filter(
        (i) => !/node_modules\/(tr46|punycode)\//.test(i) || !['email-lists/add', 'workers/purge'].includes(handler),
      ),
    ).toEqual([]);
  });

  it('holds no Unicode property regex literal in the code read at init (built on first use instead)', () => {
    // In a regex literal the escape is one backslash (/\p{L}/u), in the string given to propertyPattern two;
    // esbuild rewrites some literals as new RegExp("\\p{...}", "u"), which runs at init all the same.
    expect(contents.eagerCode.length).toBeGreaterThan(10_000);
    // valibot's emoji pattern is one of the latter; its Emoji properties are small sets (0.2% of the floor's import, measured).
    const found = contents.eagerCode.match(/(?<!\\)\\[pP]\{[^}]*\}|new RegExp\("[^"]*\\\\[pP]\{/g) ?? [];
    expect(found.filter((m) => !m.startsWith('new RegExp("^(?:[\\\\u{1F1E6}'))).toEqual([]);
  });

  it('loads no web streams: no bundled module imports them (middy imports them only for its response streaming mode)', () => {
    expect(contents.webStreamImporters).toEqual([]);
    expect(contents.code).not.toMatch(/["'](node:)?stream\/web["']/);
  });

  it("imports node:http only on first use: its module namespace loads Node's bundled undici, a third of an import on Node 24", () => {
    expect(contents.eagerCode.match(/(from|import)\s*"(node:)?http"/)?.[0] ?? 'none').toBe('none');
  });

  it.runIf(reads)('carries no idempotency records: only the endpoints whose spec is `idempotent()` do', () => {
    expect(matching(contents.all, /shared\/(data|http)\/idempotency\.ts/)).toEqual([]);
  });

  it("carries a list import's run (reading the CSV, adding its rows) only in the purge worker, which loads it with its first import", () => {
    const importRun = /shared\/email\/import-(job|csv)\.ts/;
    expect(matching(contents.eager, importRun)).toEqual([]);
    if (handler !== 'workers/purge') expect(matching(contents.all, importRun)).toEqual([]);
    else expect(matching(contents.all, importRun)).toHaveLength(2);
  });

  it('carries no zod (request and item schemas are valibot)', () => {
    expect(matching(contents.all, /node_modules\/zod\//)).toEqual([]);
  });

  it.runIf(table === undefined)('carries no DynamoDB client when the function has no table access', () => {
    expect(matching(contents.all, /node_modules\/@aws-sdk\/client-dynamodb\//)).toEqual([]);
  });
});

describe('request schemas', () => {
  // Which of these error messages a bundle carries: each stands for the schema that spells it.
  const found = (code: string, messages: string[]) => messages.filter((m) => code.includes(m));

  it('come from valibot, and a handler carries only those of its own endpoint', () => {
    const messages = contentsOf('messages/list');
    expect(messages.all.some((i) => i.includes('node_modules/valibot/'))).toBe(true);
    // Its own query (ids are "too long" past 64 characters), not the bodies of the other message and conversation endpoints.
    expect(found(messages.code, ['is too long'])).toEqual(['is too long']);
    expect(found(messages.code, ['must be an https URL', 'must be a media type', 'reaction names are', 'must be true or false'])).toEqual(
      [],
    );

    const emails = contentsOf('emails/list');
    expect(found(emails.code, ['must be a positive integer'])).toEqual(['must be a positive integer']);
    expect(found(emails.code, ['must contain at least one address', 'must not contain control characters'])).toEqual([]);
  });
});

describe('code loaded on first use', () => {
  it('runs from its chunks: the form parser, IDNA, the domain lists and Public Suffix List, Powertools Metrics, the SQS client', async () => {
    // Given the modules that import on first use, bundled as the stack bundles them
    const outdir = mkdtempSync(join(tmpdir(), 'chunks-'));
    try {
      buildSync({
        ...BUNDLING,
        stdin: {
          contents: [
            "export { countMetric, flushMetrics } from '#shared/util/metrics';",
            "export { loadValidator } from '#shared/email/validator/load';",
            "export { checkSyntax } from '#shared/email/validator/syntax';",
            "export { profileAddress } from '#shared/email/validator/address-profile';",
            "export { loadFormParser, parseForm } from '#shared/http/body';",
            "export { sqsClient } from '#shared/util/sqs';",
          ].join('\n'),
          resolveDir: repoRoot,
          sourcefile: 'first-use.ts',
          loader: 'ts',
        },
        outdir,
      });
      expect(readdirSync(join(outdir, 'chunks')).filter((f) => f.endsWith('.mjs')).length).toBeGreaterThan(0);

      // When each is loaded and used, by Node's own loader as on Lambda
      const script = `
        const bundle = await import(${JSON.stringify(pathToFileURL(join(outdir, 'stdin.mjs')).href)});
        await bundle.loadFormParser();
        await bundle.loadValidator();
        bundle.countMetric('messagesSent');
        await bundle.flushMetrics();
        const sqs = await bundle.sqsClient();
        console.log(JSON.stringify({
          sqs: [typeof sqs.send, sqs === (await bundle.sqsClient())],
          form: bundle.parseForm('a[b][]=1&a[b][]=2'),
          syntax: bundle.checkSyntax('user@bücher.de'),
          disposable: bundle.profileAddress('info', 'mailinator.com').is_disposable,
          free: bundle.profileAddress('info', 'gmail.com').is_free,
        }));`;
      const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
        env: { ...process.env, AWS_LAMBDA_FUNCTION_NAME: 'first-use', TABLE_NAME: 'first-use', AWS_REGION: 'eu-west-1' },
      });
      const [metricsLine, resultLine] = stdout.trim().split('\n');

      // Then they answer as they do from source
      expect(JSON.parse(resultLine!)).toEqual({
        sqs: ['function', true],
        form: { a: { b: ['1', '2'] } },
        syntax: expect.objectContaining({ ok: true, asciiDomain: 'xn--bcher-kva.de' }),
        disposable: true,
        free: true,
      });
      expect(JSON.parse(metricsLine!)).toMatchObject({ MessagesSent: 1 });
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  });
});
