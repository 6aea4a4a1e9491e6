import { ApiError, badRequest } from '#shared/http/errors';
import { loadedOnFirstUse } from '#shared/util/first-use';
import { isRecord } from '#shared/util/object-schema';

export const MAX_BODY_BYTES = 256 * 1024;
/** Parameters a form body may hold: 1,000 contacts of a reaction and room beside them (shared/http/form.ts reads as many). */
export const MAX_FORM_PARAMETERS = 1100;

/**
 * The form parser (shared/http/form.ts: qs, with the get-intrinsic and
 * side-channel modules under it) is loaded by the first form body rather
 * than at import: most requests carry JSON or no body, and evaluating qs is
 * about a tenth of a handler's cold import (docs/performance.md). The
 * middleware awaits this before parsing a form.
 */
const formParser = loadedOnFirstUse(
  async () => (await import('#shared/http/form')).parseForm,
  'loadFormParser() must have run before a form body is parsed',
);
export const loadFormParser = formParser.load;

export const isForm = (contentType: string | undefined) => /^\s*application\/x-www-form-urlencoded\s*(;|$)/i.test(contentType ?? '');

/** A form body's parameters, Stripe-style (`a[b][]=c`); `maps` names parameters whose keys are names (shared/http/form.ts). */
export function parseForm(text: string, maps: readonly string[] = [], parameters = [...new URLSearchParams(text)]) {
  const form = formParser.get()(text, parameters, maps, MAX_FORM_PARAMETERS);
  if (form.conflict) {
    const [value, bracketed] = form.conflict;
    throw badRequest(
      `${value} is sent empty (a removal) beside ${bracketed}: send the removal and the rest in two requests`,
      value,
      'parameter_invalid',
    );
  }
  return form.parameters;
}

export type MediaType = 'json' | 'form';

/**
 * No valid request nests this deep; a body that does is refused before any
 * work, since echoing or hashing it would recurse once per level.
 */
export const MAX_JSON_DEPTH = 32;

/** Iterative, so a hostile depth cannot exhaust the stack here either. */
export function depthExceeds(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > max) return true;
    for (const child of Object.values(node)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}

const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * A parameter name that would reach an object's prototype (`__proto__[x]`,
 * `a[constructor]`): refused as an unknown parameter, like any other name no
 * endpoint takes, before a form parser (which would drop it or set it) or a
 * schema sees it.
 */
export function prototypeKeyIn(names: Iterable<string>): string | undefined {
  for (const name of names) if (name.split(/[[\]]+/).some((segment) => PROTOTYPE_KEYS.has(segment))) return name;
  return undefined;
}

const decodes = (part: string) => {
  try {
    decodeURIComponent(part);
    return true;
  } catch {
    return false;
  }
};

/**
 * Refuses a form body whose percent-encoding does not decode (`%ZZ`, or
 * bytes that are not UTF-8 such as `%FF`), naming the parameter: the form
 * parser would keep such text as it came, and store `%FF%FE` as a message.
 */
function badlyEncoded(text: string): void {
  const pairs = text.split('&');
  // The parser reads this many and drops the rest silently: refused instead, as a parameter is never silently ignored.
  if (pairs.filter((pair) => pair !== '').length > MAX_FORM_PARAMETERS) {
    throw badRequest(`A form body holds at most ${MAX_FORM_PARAMETERS} parameters`, undefined, 'parameter_invalid');
  }
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    const [key, value] = eq < 0 ? [pair, ''] : [pair.slice(0, eq), pair.slice(eq + 1)];
    // `=x` names nothing: the form parser would drop it, and a parameter is never silently ignored.
    if (key === '' && pair !== '') throw badRequest('A parameter in the body has no name', undefined, 'parameter_unknown');
    if (!decodes(key)) throw badRequest('A parameter name in the body is not valid percent-encoded UTF-8', undefined, 'parameter_invalid');
    // No parameter's name holds a NUL, which the form parser also uses to mark a map's keys (shared/http/form.ts).
    if (decodeURIComponent(key).includes('\u0000'))
      throw badRequest('A parameter name in the body holds a NUL character', undefined, 'parameter_invalid');
    if (!decodes(value)) {
      const name = decodeURIComponent(key.replaceAll('+', ' '));
      throw badRequest(`Invalid ${name}: not valid percent-encoded UTF-8`, name, 'parameter_invalid');
    }
  }
}

/**
 * What a parsed JSON body may not hold, at any depth: a key that would reach a
 * prototype (named the way a form client would write it), or text that is not
 * Unicode (a lone surrogate escaped as `\ud800`, which no UTF-8 reader can
 * take back), named by its parameter.
 */
function refusedInJson(value: unknown, entryLists: readonly string[]): ApiError | undefined {
  const stack: [unknown, string][] = [[value, '']];
  const ownEntries = new Set<unknown>(entryLists.map((list) => (isRecord(value) ? value[list] : undefined)).filter(Array.isArray));
  while (stack.length) {
    const [node, path] = stack.pop()!;
    if (typeof node === 'string') {
      if (!node.isWellFormed()) return badRequest(`Invalid ${path}: not valid Unicode text (a lone surrogate)`, path, 'parameter_invalid');
      continue;
    }
    // A list whose entries the endpoint judges one by one: an entry that is not Unicode text is that entry's error.
    if (ownEntries.has(node)) {
      for (const [i, child] of (node as unknown[]).entries()) if (typeof child !== 'string') stack.push([child, `${path}[${i}]`]);
      continue;
    }
    if (node === null || typeof node !== 'object') continue;
    for (const [key, child] of Object.entries(node)) {
      const name = path === '' ? key : `${path}[${key}]`;
      if (PROTOTYPE_KEYS.has(key)) return unknownParameter(name, 'body');
      if (!key.isWellFormed()) return badRequest('A parameter name in the body is not valid Unicode text', undefined, 'parameter_invalid');
      stack.push([child, name]);
    }
  }
  return undefined;
}

export const unknownParameter = (name: string, where: 'body' | 'query') =>
  badRequest(`Unknown ${where === 'query' ? 'query ' : ''}parameter: ${name}`, name, 'parameter_unknown');

export const repeatedParameter = (name: string) =>
  badRequest(`Invalid ${name}: must be given once in the query`, name, 'parameter_invalid');

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A body's media type, and whether the parameters of its Content-Type name a charset other than UTF-8. */
function mediaOf(contentType: string | undefined): { media: string; otherCharset?: string } {
  const [type = '', ...parameters] = (contentType ?? '').split(';');
  for (const parameter of parameters) {
    const eq = parameter.indexOf('=');
    if (eq < 0 || parameter.slice(0, eq).trim().toLowerCase() !== 'charset') continue;
    const charset = parameter
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase();
    if (charset !== 'utf-8' && charset !== 'utf8') return { media: type.trim().toLowerCase(), otherCharset: charset };
  }
  return { media: type.trim().toLowerCase() };
}

export function parseBody(
  raw: string | null | undefined,
  isBase64: boolean,
  contentType: string | undefined,
  accepted: readonly MediaType[],
  contentEncoding?: string,
  formMaps: readonly string[] = [],
  entryLists: readonly string[] = [],
): Record<string, unknown> {
  let text = raw ?? '';
  if (raw && isBase64) {
    try {
      text = utf8.decode(Buffer.from(raw, 'base64'));
    } catch {
      throw badRequest('Request body is not valid UTF-8', undefined, 'invalid_json');
    }
  }
  if (Buffer.byteLength(text) > MAX_BODY_BYTES) {
    throw new ApiError(413, 'body_too_large', `Request body exceeds ${MAX_BODY_BYTES} bytes`);
  }
  // A compressed body would be read as garbage: refused as RFC 9110 (15.5.16) says, by its coding.
  const coding = contentEncoding?.trim().toLowerCase();
  if (text !== '' && coding && coding !== 'identity') {
    throw new ApiError(
      415,
      'unsupported_media_type',
      `Content-Encoding ${coding.slice(0, 40)} is not supported: send the body uncompressed`,
    );
  }
  const { media, otherCharset } = mediaOf(contentType);
  if (text.trim() !== '' && otherCharset !== undefined) {
    throw new ApiError(415, 'unsupported_media_type', `Request bodies are UTF-8: charset ${otherCharset.slice(0, 40)} is not supported`);
  }
  if (text.trim() === '' && (media === '' || media === 'application/json' || media.endsWith('x-www-form-urlencoded'))) {
    return {};
  }
  if (media === 'application/json' && accepted.includes('json')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw badRequest('Request body is not valid JSON', undefined, 'invalid_json');
    }
    if (!isRecord(parsed)) {
      throw badRequest('Request body must be a JSON object', undefined, 'invalid_json');
    }
    if (depthExceeds(parsed, MAX_JSON_DEPTH)) {
      throw badRequest(`Request body nests objects or arrays more than ${MAX_JSON_DEPTH} levels deep`, undefined, 'invalid_json');
    }
    const refused = refusedInJson(parsed, entryLists);
    if (refused) throw refused;
    return parsed;
  }
  if (media === 'application/x-www-form-urlencoded' && accepted.includes('form')) {
    badlyEncoded(text);
    const parameters = [...new URLSearchParams(text)];
    const forbidden = prototypeKeyIn(parameters.map(([name]) => name));
    if (forbidden !== undefined) throw unknownParameter(forbidden, 'body');
    return parseForm(text, formMaps, parameters) as Record<string, unknown>;
  }
  const names = accepted.map((m) => (m === 'json' ? 'application/json' : 'application/x-www-form-urlencoded'));
  throw new ApiError(415, 'unsupported_media_type', `Content-Type must be ${names.join(' or ')}`);
}
