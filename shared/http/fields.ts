import * as v from 'valibot';

// Schemas are built in /* @__PURE__ */ calls so that esbuild drops those a handler never uses (docs/performance.md).

/**
 * Field schemas that read the same value from JSON and from form bodies or
 * query strings, where everything arrives as a string.
 */
export const booleanField = /* @__PURE__ */ (() =>
  v.pipe(
    v.union([v.boolean(), v.picklist(['true', 'false', '1', '0'])], 'must be true or false'),
    v.transform((value) => value === true || value === 'true' || value === '1'),
  ))();

// A sign is read too, so that `-5` is told it is below the minimum rather than not an integer.
const digits = /^-?\d{1,15}$/;

export function integerField(min: number, max: number) {
  return v.pipe(
    v.union([v.number(), v.pipe(v.string(), v.regex(digits, 'must be an integer'))], 'must be an integer'),
    v.transform(Number),
    v.safeInteger('must be an integer'),
    v.minValue(min, min === 0 ? 'must be a non-negative integer' : `must be at least ${min}`),
    v.maxValue(max, `must be at most ${max}`),
  );
}

/** Stripe's convention: an empty value unsets a field. */
export function emptyMeansNull<S extends v.GenericSchema>(schema: S) {
  return v.union([
    v.pipe(
      v.literal(''),
      v.transform(() => null),
    ),
    v.null(),
    schema,
  ]);
}

/** C0 controls and DEL: a NUL or a line break in a name breaks the headers, logs and files it ends up in. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
export const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/**
 * A name of at most `max` characters, counted as a reader counts them and
 * as the OpenAPI document's `maxLength` does (code points: an emoji is one,
 * not two UTF-16 units, as for a message's text), with no control
 * characters. `blank` says whether spaces alone make a name.
 */
export const nameField = (max: number, blank: 'allowed' | 'refused' = 'allowed') =>
  v.pipe(
    v.string('must be a string'),
    v.check((s) => (blank === 'allowed' ? s.length : s.trim().length) > 0, 'must not be empty'),
    // Bounded by the body's size already; UTF-16 units first, which a code point count never exceeds.
    v.check((s) => s.length <= max || [...s].length <= max, `must be at most ${max} characters`),
    v.check((s) => !CONTROL_CHARACTER.test(s), 'must not contain control characters'),
  );

export const idField = /* @__PURE__ */ (() => v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(64, 'is too long')))();

/** Unix seconds up to the year 9999. */
export const timestampField = /* @__PURE__ */ (() => integerField(0, 253_402_300_799))();

export const cursorQuery = /* @__PURE__ */ (() => ({
  limit: v.optional(integerField(1, 100)),
  starting_after: v.optional(idField),
  ending_before: v.optional(idField),
}))();
