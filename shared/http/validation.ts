import type { z } from 'zod';
import { badRequest } from '#shared/http/errors';

/** `['attachments', 0, 'url']` → `attachments[0][url]`, the name a form client sent. */
export const paramName = (path: readonly PropertyKey[]) =>
  path.map((p, i) => (i === 0 ? String(p) : `[${String(p)}]`)).join('');

/** Parses with a schema, turning the first issue into the contract's 400. */
export function validate<T>(schema: z.ZodType<T>, input: unknown, where: 'body' | 'query'): T {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  // A misspelt parameter is the likelier mistake, so name it before any value problem.
  const issues = result.error.issues.map(mostSpecific);
  const issue = issues.find((i) => i.code === 'unrecognized_keys') ?? issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    const name = paramName([...issue.path, issue.keys[0]!]);
    return fail(`Unknown ${where === 'query' ? 'query ' : ''}parameter: ${name}`, name, 'parameter_unknown');
  }
  const name = issue.path.length > 0 ? paramName(issue.path) : undefined;
  const missing = issue.code === 'invalid_type' && issue.input === undefined;
  if (missing) return fail(`Missing required parameter: ${name}`, name, 'parameter_missing');
  return fail(name ? `Invalid ${name}: ${issue.message}` : issue.message, name, 'parameter_invalid');
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
