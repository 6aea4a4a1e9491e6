import type { presentEmail } from '#shared/email/present';

/**
 * The CSV of a list's export (RFC 4180): a header, then one row per email,
 * CRLF line ends. The columns are those the contract names first, then the
 * rest of the email object in its own order; a field the object leaves out
 * (`score` before completion, `email_list_id`) or sets null is an empty cell.
 */
export const EXPORT_COLUMNS = [
  'email',
  'status',
  'is_valid',
  'deliverability',
  'score',
  'id',
  'email_list_id',
  'can_connect',
  'mx_record_count',
  'connectable_mx_record_count',
  'is_username_generic',
  'is_alias',
  'is_gov',
  'is_edu',
  'is_mil',
  'is_free',
  'is_subdomain',
  'canonical_email',
  'is_disposable',
  'did_you_mean',
  'is_catch_all',
] as const;

/**
 * One cell, quoted only when RFC 4180 requires it (a comma, a quote or a
 * line break), quotes doubled. Writing is this one rule over values this
 * service made itself (numbers, booleans, addresses it accepted), so it is
 * a function here rather than a library in the worker's bundle; reading a
 * CSV someone else wrote is another matter (the imports use a parser).
 */
function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

const row = (values: readonly unknown[]) => `${values.map(cell).join(',')}\r\n`;

export const csvHeader = row(EXPORT_COLUMNS);

export const csvRow = (email: ReturnType<typeof presentEmail>) => {
  const fields: Record<string, unknown> = email;
  return row(EXPORT_COLUMNS.map((column) => fields[column]));
};
