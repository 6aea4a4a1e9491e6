import * as z from 'zod/mini';

// Schemas are built in /* @__PURE__ */ calls so that esbuild drops those a handler never uses (docs/performance.md).

/**
 * Field schemas that read the same value from JSON and from form bodies or
 * query strings, where everything arrives as a string.
 */
export const booleanField = /* @__PURE__ */ (() =>
  z.pipe(
    z.union([z.boolean(), z.enum(['true', 'false', '1', '0'])], { error: 'must be true or false' }),
    z.transform((v) => v === true || v === 'true' || v === '1'),
  ))();

const digits = /^\d{1,15}$/;

export const integerField = (min: number, max: number) =>
  z.pipe(
    z.pipe(
      z.union([z.number(), z.string().check(z.regex(digits, 'must be an integer'))], { error: 'must be an integer' }),
      z.transform((v) => Number(v)),
    ),
    z.number().check(z.int('must be an integer'), z.gte(min, `must be at least ${min}`), z.lte(max, `must be at most ${max}`)),
  );

/** Stripe's convention: an empty value unsets a field. */
export const emptyMeansNull = <T extends z.ZodMiniType>(schema: T) =>
  z.union([
    z.pipe(
      z.literal(''),
      z.transform(() => null),
    ),
    z.null(),
    schema,
  ]);

export const idField = /* @__PURE__ */ (() => z.string().check(z.minLength(1, 'must not be empty'), z.maxLength(64, 'is too long')))();

/** Unix seconds up to the year 9999. */
export const timestampField = /* @__PURE__ */ integerField(0, 253_402_300_799);

export const cursorQuery = /* @__PURE__ */ (() => ({
  limit: z.optional(integerField(1, 100)),
  starting_after: z.optional(idField),
  ending_before: z.optional(idField),
}))();
