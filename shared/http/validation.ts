import * as v from 'valibot';
import { unknownParameter } from '#shared/http/body';
import { badRequest } from '#shared/http/errors';

/** A request schema: any input, the endpoint's typed value out. */
export type Schema<T> = v.GenericSchema<unknown, T>;
type Issue = v.BaseIssue<unknown>;

/** `['attachments', 0, 'url']` → `attachments[0][url]`, the name a form client sent. */
export const paramName = (path: readonly PropertyKey[]) => path.map((p, i) => (i === 0 ? String(p) : `[${String(p)}]`)).join('');

/** Parses with a schema, turning the first issue into the documented 400 (docs/api-conventions.md). */
export function validate<T>(schema: Schema<T>, input: unknown, where: 'body' | 'query'): T {
  const result = v.safeParse(schema, input, { message: describeIssue });
  if (result.success) return result.output;
  const issues = result.issues.map((issue) => mostSpecific(issue, []));
  // A misspelt parameter is the likelier mistake, so name it before any value problem.
  const unknown = issues.find(({ issue }) => isUnknownKey(issue));
  if (unknown) throw unknownParameter(paramName(unknown.path), where);
  const { issue, path } = issues[0]!;
  const name = path.length > 0 ? paramName(path) : undefined;
  const sent = valueAt(input, path);
  // Missing means absent: a value of the wrong kind is invalid, whatever it is.
  if (sent === undefined && issue.kind === 'schema') {
    return fail(`Missing required parameter: ${name}`, name, 'parameter_missing');
  }
  // A schema's own wording ("must be a string") gets what was sent too.
  const message = wrongKind(issue) && !issue.message.includes(', got ') ? `${issue.message}, got ${kindOf(sent)}` : issue.message;
  return fail(name ? `Invalid ${name}: ${message}` : message, name, 'parameter_invalid');
}

/** A strict object's report of a key it does not take. */
const isUnknownKey = (issue: Issue) => issue.type === 'strict_object' && issue.expected === 'never';

/** A schema's report that the value is of another kind (a string where a number belongs); literals and picklists name values instead. */
const isKindIssue = (issue: Issue) => issue.kind === 'schema' && issue.type !== 'literal' && issue.type !== 'picklist';

/** Issues about the kind of value sent, as opposed to its content: an integer check's too (1.5 is a number, not an integer). */
const wrongKind = (issue: Issue) => isKindIssue(issue) || issue.type === 'safe_integer';

const keysOf = (issue: Issue): PropertyKey[] => issue.path?.map((item) => item.key as PropertyKey) ?? [];

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

/** The kind a schema takes, by its type: objects and records are both "an object" to a client. */
const KIND: Record<string, string> = { strict_object: 'object', object: 'object', record: 'object' };

/** What one issue (or one alternative of a union) wanted, as a phrase: "a string", "empty". */
function expected(issue: Issue): string | undefined {
  if (issue.type === 'null') return undefined;
  if (issue.type === 'literal' || issue.type === 'picklist') {
    return issue.expected
      ?.split(' | ')
      .map((e) => (e === '""' ? 'empty' : e))
      .join(' or ');
  }
  if (issue.message.startsWith('must be ')) return issue.message.slice('must be '.length).split(', got ')[0];
  if (issue.kind === 'schema') return article(KIND[issue.type] ?? issue.type);
  return undefined;
}

/**
 * The messages of issues whose schema says nothing itself: what was expected
 * and what came, never a bare "Invalid type". A union lists what each
 * alternative takes ("an integer or empty").
 */
function describeIssue(issue: Issue): string {
  if (issue.type === 'union') {
    const wanted = [...new Set((issue.issues ?? []).filter((i) => !i.path).map(expected))].filter((w) => w !== undefined);
    // "empty" (an unset) reads best last.
    wanted.sort((a, b) => Number(a === 'empty') - Number(b === 'empty'));
    if (wanted.length > 0) return `must be ${wanted.join(' or ')}, got ${kindOf(issue.input)}`;
    return `has the wrong type or shape (got ${kindOf(issue.input)})`;
  }
  if (isKindIssue(issue)) {
    return `must be ${expected(issue)}, got ${kindOf(issue.input)}`;
  }
  return `must be ${expected(issue) ?? 'valid'}`;
}

/**
 * A union (e.g. "an attachment list, or empty to clear") fails as a whole;
 * the alternative that got deepest into the value says best what is wrong,
 * and among those a misspelt key comes first, as at the top level.
 */
function mostSpecific(issue: Issue, base: readonly PropertyKey[]): { issue: Issue; path: PropertyKey[] } {
  const path = [...base, ...keysOf(issue)];
  if (issue.type !== 'union' || !issue.issues?.length) return { issue, path };
  const deeper = issue.issues.map((inner) => mostSpecific(inner, path)).filter((c) => c.path.length > path.length);
  if (deeper.length === 0) return { issue, path };
  return deeper.find((c) => isUnknownKey(c.issue)) ?? deeper.reduce((best, c) => (c.path.length > best.path.length ? c : best));
}

const fail = (message: string, param: string | undefined, code: string): never => {
  throw badRequest(message, param, code);
};
