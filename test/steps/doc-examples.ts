/**
 * The runnable examples of the Markdown documentation: fenced blocks whose
 * info string is `bash runnable` (optionally `status=201,200`: the status of
 * each curl in the block, in order; otherwise every one must be 2xx),
 * optionally followed by a `json` block, the output the block prints.
 */
export interface DocExample {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  script: string;
  statuses?: number[];
  /** The documented output, parsed. */
  output?: unknown;
}

const FENCE = /^```(.*)$/;

export function docExamples(file: string, markdown: string): DocExample[] {
  const lines = markdown.split('\n');
  const blocks: { info: string; line: number; body: string; endLine: number }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i]!);
    blocks.push({ info: open[1]!.trim(), line: start + 1, body: body.join('\n'), endLine: i + 1 });
  }
  const examples: DocExample[] = [];
  blocks.forEach((block, index) => {
    const [language, marker, ...options] = block.info.split(/\s+/);
    if (language !== 'bash' || marker !== 'runnable') return;
    const statusOption = options.find((o) => o.startsWith('status='));
    const next = blocks[index + 1];
    // The output belongs to the example when nothing but blank lines separates them.
    const adjacent = next && lines.slice(block.endLine, next.line - 1).every((l) => l.trim() === '');
    examples.push({
      file,
      line: block.line,
      script: block.body,
      statuses: statusOption?.slice('status='.length).split(',').map(Number),
      output: adjacent && next.info === 'json' ? JSON.parse(next.body) : undefined,
    });
  });
  return examples;
}

const ID = /^(conv|msg|ct|grp|att|acct|tok|tkn|exp)_[0-9A-HJKMNP-TV-Z]{26}$/;

/**
 * Where `actual` departs from the documented `expected`: the same keys at
 * every level, arrays of the same length, values of the same JSON type;
 * booleans and strings equal too, except generated ids. Numbers (ids, times,
 * counts) are compared by type. Empty when they match.
 */
export function shapeDifferences(expected: unknown, actual: unknown, path = '$'): string[] {
  const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
  if (kind(expected) !== kind(actual)) return [`${path}: documented ${kind(expected)}, got ${kind(actual)} (${JSON.stringify(actual)})`];
  if (Array.isArray(expected)) {
    const got = actual as unknown[];
    if (got.length !== expected.length) return [`${path}: documented ${expected.length} items, got ${got.length}`];
    return expected.flatMap((e, i) => shapeDifferences(e, got[i], `${path}[${i}]`));
  }
  if (kind(expected) === 'object') {
    const e = expected as Record<string, unknown>;
    const a = actual as Record<string, unknown>;
    const keys = [...new Set([...Object.keys(e), ...Object.keys(a)])];
    return keys.flatMap((k) => {
      if (!(k in a)) return [`${path}.${k}: documented, missing`];
      if (!(k in e)) return [`${path}.${k}: not documented (${JSON.stringify(a[k])})`];
      return shapeDifferences(e[k], a[k], `${path}.${k}`);
    });
  }
  // Ids are generated: prefixed ids, and numeric ids quoted in messages ("No such email list: '17'").
  const generic = (v: unknown) => (typeof v === 'string' ? v.replace(/'\d+'/g, "'<id>'") : v);
  const generated = typeof expected === 'string' && ID.test(expected);
  if ((typeof expected === 'string' || typeof expected === 'boolean') && !generated && generic(expected) !== generic(actual)) {
    return [`${path}: documented ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`];
  }
  return [];
}
