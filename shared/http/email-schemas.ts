import * as v from 'valibot';
import { nameField } from '#shared/http/fields';

export const MAX_BATCH = 100;

/** Entries are checked one by one (a bad entry is reported in place), so any JSON value is taken here. */
export const emailsBody = /* @__PURE__ */ (() =>
  v.strictObject({
    emails: v.pipe(
      v.array(v.unknown(), 'must be an array of email addresses'),
      v.minLength(1, 'must contain at least one address'),
      v.maxLength(MAX_BATCH, `must contain at most ${MAX_BATCH} addresses`),
    ),
  }))();

export const createListBody = /* @__PURE__ */ (() =>
  v.strictObject({
    name: nameField(200, 'refused'),
    // null is no description, as a list shows it.
    description: v.optional(
      v.pipe(
        v.nullable(v.pipe(v.string('must be a string'), v.maxLength(2000, 'must be at most 2000 characters'))),
        v.transform((d) => d ?? undefined),
      ),
    ),
  }))();

/**
 * `page` arrives as a query string: digits only, so 1.5, -1, 1e3 and "two" are all `parameter_invalid`; any string of
 * digits is a page number, and one past the last page (however many digits) is `page_out_of_range`. Past 2^53 a
 * number is held at 2^53 - 1, past every page there can be.
 */
export const pageQuery = /* @__PURE__ */ (() =>
  v.strictObject({
    page: v.optional(
      v.pipe(
        v.string(),
        v.regex(/^\d+$/, 'must be a positive integer'),
        v.transform((digits) => Math.min(Number(digits), Number.MAX_SAFE_INTEGER)),
      ),
    ),
  }))();

/** Which emails an export holds: any of the deliverability values, each named when wrong. */
export const createExportBody = /* @__PURE__ */ (() =>
  v.strictObject({
    deliverability: v.optional(
      v.pipe(
        v.array(
          v.picklist(
            ['deliverable', 'undeliverable', 'risky', 'unknown'],
            (issue) => `must be deliverable, undeliverable, risky or unknown, got ${JSON.stringify(issue.input)}`,
          ),
          'must be an array of deliverability values',
        ),
        v.minLength(1, 'must name at least one deliverability value (leave it out for every email)'),
      ),
    ),
  }))();
