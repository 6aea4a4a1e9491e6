import * as z from 'zod/mini';

// Schemas are built in /* @__PURE__ */ calls so that esbuild drops those a handler never uses (docs/performance.md).

export const MAX_BATCH = 100;

/** Entries are checked one by one (a bad entry is reported in place), so any JSON value is taken here. */
export const emailsBody = /* @__PURE__ */ (() =>
  z.strictObject({
    emails: z
      .array(z.unknown(), { error: 'must be an array of email addresses' })
      .check(z.minLength(1, 'must contain at least one address'), z.maxLength(MAX_BATCH, `must contain at most ${MAX_BATCH} addresses`)),
  }))();

export const createListBody = /* @__PURE__ */ (() =>
  z.strictObject({
    name: z.string({ error: 'must be a string' }).check(
      z.refine((s) => s.trim().length > 0, { error: 'must not be empty' }),
      z.refine((s) => s.length <= 200, { error: 'must be at most 200 characters' }),
    ),
    description: z.optional(z.string({ error: 'must be a string' }).check(z.maxLength(2000, 'must be at most 2000 characters'))),
  }))();

/** `page` arrives as a query string: digits only, so 1.5, -1, 1e3 and "two" are all 400s. */
export const pageQuery = /* @__PURE__ */ (() =>
  z.strictObject({
    page: z.optional(z.pipe(z.string().check(z.regex(/^\d{1,9}$/, 'must be a positive integer')), z.transform(Number))),
  }))();
