import type { z } from 'zod/mini';
import { unknownParameter } from '#shared/http/body';
import { badRequest } from '#shared/http/errors';

/** `['attachments', 0, 'url']` → `attachments[0][url]`, the name a form client sent. */
export const paramName = (path: readonly PropertyKey[]) => path.map((p, i) => (i === 0 ? String(p) : `[${String(p)}]`)).join('');

/** Parses with a schema, turning the first issue into the documented 400 (docs/api-conventions.md). */
export function validate<T>(schema: z.ZodMiniType<T>, input: unknown, where: 'body' | 'query'): T {
  const result = schema.safeParse(input, { error: describeIssue });
  if (result.success) return result.data;
  // A misspelt parameter is the likelier mistake, so name it before any value problem.
  const issues = result.error.issues.map(mostSpecific);
  const issue = issues.find((i) => i.code === 'unrecognized_keys') ?? issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    const name = paramName([...issue.path, issue.keys[0]!]);
    throw unknownParameter(name, where);
  }
  const name = issue.path.length > 0 ? paramName(issue.path) : undefined;
  // Missing means absent: a value of the wrong type is invalid, whatever it is.
  if (issue.code === 'invalid_type' && valueAt(input, issue.path) === undefined) {
    return fail(`Missing required parameter: ${name}`, name, 'parameter_missing');
  }
  const sent = valueAt(input, issue.path);
  // A schema's own wording ("must be a string") gets what was sent too.
  const wrongKind = (issue.code === 'invalid_type' || issue.code === 'invalid_union') && !issue.message.includes(', got ');
  const message = wrongKind ? `${issue.message}, got ${kindOf(sent)}` : issue.message;
  return fail(name ? `Invalid ${name}: ${message}` : message, name, 'parameter_invalid');
}

const valueAt = (input: unknown, path: readonly PropertyKey[]): unknown => {
  let node = input;
  for (const key of path) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
};

/** What a client sent, in the words of the error messages (docs/api-conventions.md). */
const kindOf = (value: unknown): string => {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return value === '' ? 'an empty value' : 'a string';
  return `a ${typeof value}`;
};

const article = (noun: string) => (/^[aeiou]/.test(noun) ? `an ${noun}` : `a ${noun}`);

type RawIssue = z.core.$ZodRawIssue;

/** What one issue (or one branch of a union) wanted, as a phrase: "a string", "empty". */
function expected(issue: RawIssue | z.core.$ZodIssue): string | undefined {
  if (issue.code === 'invalid_type') {
    if (issue.expected === 'null') return undefined;
    return article(issue.expected === 'record' ? 'object' : String(issue.expected));
  }
  if (issue.code === 'invalid_value') return issue.values.map((v) => (v === '' ? 'empty' : JSON.stringify(v))).join(' or ');
  const message = 'message' in issue ? issue.message : undefined;
  return message?.startsWith('must be ') ? message.slice('must be '.length) : undefined;
}

/**
 * The messages of issues whose schema says nothing itself: what was expected
 * and what came, never zod's bare "Invalid input". A union lists what each
 * alternative takes ("an integer or empty").
 */
function describeIssue(issue: RawIssue): string | undefined {
  if (issue.code === 'invalid_type') return `must be ${expected(issue)}, got ${kindOf(issue.input)}`;
  if (issue.code === 'invalid_value') return `must be ${expected(issue)}`;
  if (issue.code === 'invalid_union') {
    const wanted = [...new Set(issue.errors.map((branch) => (branch[0] ? expected(branch[0]) : undefined)).filter((w) => w !== undefined))];
    // "empty" (an unset) reads best last.
    wanted.sort((a, b) => Number(a === 'empty') - Number(b === 'empty'));
    if (wanted.length > 0) return `must be ${wanted.join(' or ')}, got ${kindOf(issue.input)}`;
    return `has the wrong type or shape (got ${kindOf(issue.input)})`;
  }
  return undefined;
}

type Issue = z.core.$ZodIssue;

/**
 * A union (e.g. "an attachment list, or empty to clear") fails as a whole;
 * the branch that got deepest into the value says best what is wrong.
 */
function mostSpecific(issue: Issue): Issue {
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return issue;
  const candidates = issue.errors.flat().map((inner) => {
    const resolved = mostSpecific(inner);
    return { ...resolved, path: [...issue.path, ...resolved.path] } as Issue;
  });
  const deepest = candidates.reduce((best, c) => (c.path.length > best.path.length ? c : best));
  return deepest.path.length > issue.path.length ? deepest : issue;
}

const fail = (message: string, param: string | undefined, code: string): never => {
  throw badRequest(message, param, code);
};
