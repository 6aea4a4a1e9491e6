import * as z from 'zod';

/**
 * Field schemas that read the same value from JSON and from form bodies or
 * query strings, where everything arrives as a string.
 */
export const booleanField = z
  .union([z.boolean(), z.enum(['true', 'false', '1', '0'])], { error: 'must be true or false' })
  .transform((v) => v === true || v === 'true' || v === '1');

const digits = /^\d{1,15}$/;

export const integerField = (min: number, max: number) =>
  z
    .union([z.number(), z.string().regex(digits, 'must be an integer')], { error: 'must be an integer' })
    .transform((v) => Number(v))
    .pipe(z.number().int('must be an integer').min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));

/** Stripe's convention: an empty value unsets a field. */
export const emptyMeansNull = <T extends z.ZodType>(schema: T) => z.union([z.literal('').transform(() => null), z.null(), schema]);

export const idField = z.string().min(1, 'must not be empty').max(64, 'is too long');

/** Unix seconds up to the year 9999. */
export const timestampField = integerField(0, 253_402_300_799);

export const cursorQuery = {
  limit: integerField(1, 100).optional(),
  starting_after: idField.optional(),
  ending_before: idField.optional(),
};
