import * as z from 'zod';

export const MAX_BATCH = 100;

/** Entries are checked one by one (a bad entry is reported in place), so any JSON value is taken here. */
export const emailsBody = z.strictObject({
  emails: z
    .array(z.unknown(), { error: 'must be an array of email addresses' })
    .min(1, 'must contain at least one address')
    .max(MAX_BATCH, `must contain at most ${MAX_BATCH} addresses`),
});

export const createListBody = z.strictObject({
  name: z
    .string({ error: 'must be a string' })
    .refine((s) => s.trim().length > 0, { error: 'must not be empty' })
    .refine((s) => s.length <= 200, { error: 'must be at most 200 characters' }),
  description: z.string({ error: 'must be a string' }).max(2000, 'must be at most 2000 characters').optional(),
});

/** `page` arrives as a query string: digits only, so 1.5, -1, 1e3 and "two" are all 400s. */
export const pageQuery = z.strictObject({
  page: z
    .string()
    .regex(/^\d{1,9}$/, 'must be a positive integer')
    .transform(Number)
    .optional(),
});
