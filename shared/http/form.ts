import qs from 'qs';

/*
 * Parsing a form body, loaded by the first one (shared/http/body.ts): qs and
 * the map handling below stay off every function's init.
 */

/** Put before a map's key made of digits while the form is parsed, so that the parser keeps it a key (a NUL no body may hold). */
const KEY_MARK = '\u0000';

/** `reactions[100][]` → `reactions[<mark>100][]` when `reactions` is a map: its first segment is a name, not an index. */
function markedMapKey(key: string, maps: readonly string[]): string {
  for (const name of maps) {
    if (!key.startsWith(`${name}[`)) continue;
    const end = key.indexOf(']', name.length + 1);
    const segment = key.slice(name.length + 1, end);
    if (end > name.length + 1 && /^\d+$/.test(segment)) return `${name}[${KEY_MARK}${key.slice(name.length + 1)}`;
  }
  return key;
}

// Checked here rather than with shared/util/object-schema's: a module both this chunk and the entry import would be split
// into a chunk of its own, read at every init (docs/performance.md, Code splitting).
const isMap = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Bracketed segments the parser reads under a name (its `depth`): what follows stays one key, as the parser keeps it. */
const DEPTH = 4;

/**
 * A parameter name's path as the parser reads it: the name, then each
 * bracketed segment (`[]` an empty one) up to DEPTH, then the rest as one;
 * NUL-separated, as no name holds one. Linear in the name's length.
 */
const pathOf = (key: string) => {
  const open = key.indexOf('[');
  if (open <= 0) return key;
  const parts = [key.slice(0, open)];
  let at = open;
  for (; parts.length <= DEPTH && key[at] === '[';) {
    const close = key.indexOf(']', at);
    if (close < 0) break;
    parts.push(key.slice(at + 1, close));
    at = close + 1;
  }
  if (at < key.length && parts.length > DEPTH) parts.push(key.slice(at));
  return parts.join('\u0000');
};

/**
 * The first parameter sent empty (a removal: `reactions[heart]=`,
 * `attachments=`) beside others with brackets under it
 * (`reactions[heart][]=dana`), as [the empty one's name, the bracketed
 * one's]: the parser would fold the two into one list, in the order they
 * came, and the request would mean what its parameters' order made of it.
 * At most DEPTH + 1 prefixes of each name are looked up.
 */
function shapeConflict(parameters: readonly [string, string][]): [string, string] | undefined {
  const emptied = new Map(parameters.filter(([, value]) => value === '').map(([name]) => [pathOf(name), name]));
  if (emptied.size === 0) return undefined;
  for (const name of new Set(parameters.map(([name]) => name))) {
    const path = pathOf(name);
    for (let cut = path.indexOf('\u0000'); cut > 0; cut = path.indexOf('\u0000', cut + 1)) {
      const value = emptied.get(path.slice(0, cut));
      if (value !== undefined) return [value, name];
    }
  }
  return undefined;
}

/**
 * Form bodies use Stripe-style brackets (`a[b][]=c`, `list[0][k]=v`). The
 * limits keep a hostile body from building huge or deep objects. A segment
 * of digits is an array index, except right under a parameter named in
 * `maps`, whose keys are names (`reactions[100][]=bob`, a reaction named
 * `100`): as in JSON, where `{"reactions": {"100": ["bob"]}}` is the same.
 */
export const parseForm = (text: string, parameters: readonly [string, string][], maps: readonly string[], maxParameters: number) => {
  // `parameters`: the body's name-value pairs as URLSearchParams reads them, which body.ts has read already.
  const conflict = shapeConflict(parameters);
  return conflict ? { conflict } : { parameters: parsedForm(text, maps, maxParameters) };
};

function parsedForm(text: string, maps: readonly string[], maxParameters: number) {
  // parameterLimit: body.ts refuses a body of more before this runs, and hands its limit in (importing it would split
  // body.ts into a chunk of its own, read at every init). Any list a body can hold stays a list, so that its schema
  // says how long it may be: past arrayLimit the parser would make it an object ("must be an array, got an object").
  // Names like `toString` or `hasOwnProperty` are kept as the parameters they are (own properties, as JSON.parse makes
  // them), for the schema to refuse or take (a reaction may be named `toString`): the parser would drop them silently.
  // The names that reach a prototype (`__proto__`, `constructor`, `prototype`) were refused before (shared/http/body.ts).
  const options = { depth: 4, arrayLimit: maxParameters, parameterLimit: maxParameters, allowPrototypes: true, charset: 'utf-8' } as const;
  if (maps.length === 0) return qs.parse(text, options);
  const parsed = qs.parse(text, {
    ...options,
    decoder: (part, decode, charset, type) =>
      type === 'key' ? markedMapKey(decode(part, decode, charset), maps) : decode(part, decode, charset),
  });
  for (const name of maps) {
    const map = parsed[name];
    // An object puts keys of digits first, whatever their order: the map goes on as a list of one-key objects instead,
    // in the body's order (the JSON form `[{"thumbsup": [...]}, {"100": [...]}]`), when it has such a key.
    if (isMap(map) && Object.keys(map).some((key) => key.startsWith(KEY_MARK))) {
      parsed[name] = Object.entries(map).map(([key, value]) => ({ [key.replace(KEY_MARK, '')]: value }));
    }
  }
  return parsed;
}
