import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';

/**
 * Checks real responses against docs/openapi.yaml: the operation is found by
 * matching the actual path against the document's path templates, the
 * response by status (exact, then a range such as `5XX`, then `default`),
 * and the body is validated with Ajv (OpenAPI 3.1 schemas are JSON Schema
 * 2020-12). Requests no operation matches are checked against the
 * document's `x-fallback-responses` (404 unknown path, 405 wrong method).
 *
 * The document holds both APIs (messaging `/v1/...`, email validation
 * `/api/v1/...`, each with its own servers); their paths are disjoint, so
 * the path alone picks the operation. A request sent to the other API's
 * base address (e.g. `/v1/messages` on the email API) is not modelled.
 */
export const OPENAPI_PATH = fileURLToPath(new URL('../../docs/openapi.yaml', import.meta.url));

const DOC_ID = 'https://messaging.invalid/openapi.yaml';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

type Json = Record<string, unknown>;
type Responses = Record<string, Json>;

export interface OpenApiOperation {
  method: string;
  pathTemplate: string;
  operationId: string;
  responses: Responses;
  /** JSON pointer of `responses` inside the document. */
  pointer: string;
}

let documentCache: Json | undefined;
let ajvCache: Ajv2020 | undefined;
const validators = new Map<string, ValidateFunction>();

/** The parsed document (read once). */
export function openApiDocument(): Json {
  documentCache ??= parse(readFileSync(OPENAPI_PATH, 'utf8')) as Json;
  return documentCache;
}

function ajv(): Ajv2020 {
  if (ajvCache) return ajvCache;
  // strict: false lets OpenAPI-only keywords (example, x-*, discriminator...) through.
  const instance = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(instance);
  // The whole document under one $id, so `#/components/...` refs resolve inside it.
  instance.addSchema({ ...openApiDocument(), $id: DOC_ID }, undefined, undefined, false);
  ajvCache = instance;
  return instance;
}

const escapePointer = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');
const unescapePointer = (segment: string) => segment.replace(/~1/g, '/').replace(/~0/g, '~');

function resolvePointer(pointer: string): unknown {
  let node: unknown = openApiDocument();
  for (const segment of pointer.split('/').slice(1)) {
    node = (node as Json | undefined)?.[unescapePointer(segment)];
  }
  return node;
}

/** Follows `$ref`s between OpenAPI objects (responses), returning the object and its pointer. */
function deref(node: Json, pointer: string): { node: Json; pointer: string } {
  const seen = new Set<string>();
  while (typeof node.$ref === 'string') {
    const ref = node.$ref;
    if (!ref.startsWith('#/') || seen.has(ref)) throw new Error(`OpenAPI: unsupported or circular $ref '${ref}' at ${pointer}`);
    seen.add(ref);
    pointer = ref.slice(1);
    const target = resolvePointer(pointer);
    if (!target || typeof target !== 'object') throw new Error(`OpenAPI: unresolved $ref '${ref}'`);
    node = target as Json;
  }
  return { node, pointer };
}

/** Every operation of the document. */
export function operations(): OpenApiOperation[] {
  const paths = (openApiDocument().paths ?? {}) as Record<string, Json>;
  const list: OpenApiOperation[] = [];
  for (const [pathTemplate, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      if (!op) continue;
      list.push({
        method: method.toUpperCase(),
        pathTemplate,
        operationId: String(op.operationId ?? `${method.toUpperCase()} ${pathTemplate}`),
        responses: (op.responses ?? {}) as Responses,
        pointer: `/paths/${escapePointer(pathTemplate)}/${method}/responses`,
      });
    }
  }
  return list;
}

/** Path part of `path`, without query, fragment or trailing slash; a full URL is reduced to its path. */
function pathOnly(path: string): string {
  const raw = /^https?:\/\//i.test(path) ? new URL(path).pathname : path.split(/[?#]/)[0]!;
  return raw.replace(/\/+$/, '') || '/';
}

/** Literal segments must be equal; a `{name}` segment matches any one non-empty segment. */
function templateMatches(template: string, path: string): boolean {
  const want = template.split('/').filter(Boolean);
  const got = path.split('/').filter(Boolean);
  return want.length === got.length && want.every((w, i) => (/^\{[^}]+\}$/.test(w) ? got[i] !== '' : w === got[i]));
}

const templateParams = (template: string) => (template.match(/\{[^}]+\}/g) ?? []).length;

/** The templates matching `path`, the most literal first (as OpenAPI requires for `/a/mine` vs `/a/{id}`). */
function matchingTemplates(path: string): string[] {
  const paths = Object.keys((openApiDocument().paths ?? {}) as Json);
  return paths.filter((t) => templateMatches(t, path)).sort((a, b) => templateParams(a) - templateParams(b));
}

interface Target {
  label: string;
  responses: Responses;
  pointer: string;
}

function targetFor(method: string, path: string): Target {
  const actual = pathOnly(path);
  const templates = matchingTemplates(actual);
  const upper = method.toUpperCase();
  for (const template of templates) {
    const op = operations().find((o) => o.pathTemplate === template && o.method === upper);
    if (op) return { label: `${op.operationId} (${upper} ${template})`, responses: op.responses, pointer: op.pointer };
  }
  const kind = templates.length > 0 ? 'methodNotAllowed' : 'unknownPath';
  const fallback = (openApiDocument()['x-fallback-responses'] as Record<string, Json> | undefined)?.[kind];
  if (!fallback) throw new Error(`OpenAPI: no operation for ${upper} ${actual} and no x-fallback-responses.${kind}`);
  return {
    label: `${kind} (${upper} ${actual})`,
    responses: (fallback.responses ?? {}) as Responses,
    pointer: `/x-fallback-responses/${kind}/responses`,
  };
}

/** The response key documenting `status`: exact code, then its range (`4XX`), then `default`. */
function responseKey(responses: Responses, status: number): string | undefined {
  const exact = String(status);
  const range = `${exact[0]}XX`;
  return [exact, range, range.toLowerCase(), 'default'].find((key) => key in responses);
}

function validatorFor(pointer: string): ValidateFunction {
  let validate = validators.get(pointer);
  if (!validate) {
    validate = ajv().compile({ $ref: `${DOC_ID}#${pointer}` });
    validators.set(pointer, validate);
  }
  return validate;
}

const show = (body: unknown) => {
  const text = JSON.stringify(body, null, 2) ?? String(body);
  return text.length > 4000 ? `${text.slice(0, 4000)}\n... (${text.length} characters)` : text;
};

const formatErrors = (errors: ErrorObject[] | null | undefined) =>
  (errors ?? [])
    .map((e) => `  - ${e.instancePath || '(body)'} ${e.message ?? e.keyword} ${JSON.stringify(e.params)} [${e.schemaPath}]`)
    .join('\n');

/**
 * Throws unless `body` is what docs/openapi.yaml documents for `status` of
 * the operation `method path` answers (`path` is the actual path, e.g.
 * `/v1/messages/msg_01...`, optionally with a query string).
 */
export function assertMatchesOpenApi(method: string, path: string, status: number, body: unknown): void {
  const target = targetFor(method, path);
  const key = responseKey(target.responses, status);
  if (key === undefined) {
    throw new Error(
      `OpenAPI: status ${status} is not documented for ${target.label}; documented: ${Object.keys(target.responses).join(', ')}\n` +
        `body: ${show(body)}`,
    );
  }
  const { node: response, pointer } = deref(target.responses[key]!, `${target.pointer}/${escapePointer(key)}`);
  const content = response.content as Record<string, Json> | undefined;
  if (!content || Object.keys(content).length === 0) {
    if (body === undefined || body === null || body === '') return;
    throw new Error(`OpenAPI: ${target.label} documents no body for ${status} (response '${key}'), got:\n${show(body)}`);
  }
  const media = 'application/json' in content ? 'application/json' : Object.keys(content)[0]!;
  if (!content[media]!.schema) return;
  const validate = validatorFor(`${pointer}/content/${escapePointer(media)}/schema`);
  if (!validate(body)) {
    throw new Error(
      `OpenAPI: response ${status} of ${target.label} does not match its schema (response '${key}', ${media}):\n` +
        `${formatErrors(validate.errors)}\nbody: ${show(body)}`,
    );
  }
}

/** The numeric statuses documented for an operation, given by its path template (`/v1/messages/{id}`). */
export function documentedStatuses(method: string, pathTemplate: string): number[] {
  const op = operations().find((o) => o.method === method.toUpperCase() && o.pathTemplate === pathTemplate);
  if (!op) throw new Error(`OpenAPI: no operation ${method.toUpperCase()} ${pathTemplate}`);
  return Object.keys(op.responses)
    .filter((key) => /^\d{3}$/.test(key))
    .map(Number)
    .sort((a, b) => a - b);
}

/** Compiles the schema of one response (for tests that want every schema to compile). */
export function compileResponseSchema(method: string, pathTemplate: string, statusKey: string): ValidateFunction | undefined {
  const op = operations().find((o) => o.method === method.toUpperCase() && o.pathTemplate === pathTemplate);
  if (!op) throw new Error(`OpenAPI: no operation ${method.toUpperCase()} ${pathTemplate}`);
  const entry = op.responses[statusKey];
  if (!entry) return undefined;
  const { node, pointer } = deref(entry, `${op.pointer}/${escapePointer(statusKey)}`);
  const content = node.content as Record<string, Json> | undefined;
  if (!content?.['application/json']?.schema) return undefined;
  return validatorFor(`${pointer}/content/application~1json/schema`);
}

/** A validator for `#/components/schemas/<name>`. */
export function schemaValidator(name: string): ValidateFunction {
  return validatorFor(`/components/schemas/${escapePointer(name)}`);
}

/** Response objects (after `$ref`s) of every operation and of `x-fallback-responses`, with where they are. */
export function allResponses(): { where: string; status: string; response: Json }[] {
  const out: { where: string; status: string; response: Json }[] = [];
  for (const op of operations()) {
    for (const [status, entry] of Object.entries(op.responses)) {
      out.push({ where: `${op.method} ${op.pathTemplate}`, status, response: deref(entry, op.pointer).node });
    }
  }
  const fallbacks = (openApiDocument()['x-fallback-responses'] ?? {}) as Record<string, Json>;
  for (const [kind, fallback] of Object.entries(fallbacks)) {
    for (const [status, entry] of Object.entries((fallback.responses ?? {}) as Responses)) {
      out.push({ where: kind, status, response: deref(entry, `/x-fallback-responses/${kind}`).node });
    }
  }
  return out;
}
