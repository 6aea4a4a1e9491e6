import { describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import type { EmailRecord } from '#shared/data/emails';
import { csvHeader, csvRow, EXPORT_COLUMNS } from '#shared/email/csv';
import { presentEmail } from '#shared/email/present';
import type { ValidationResult } from '#shared/email/result';

const completed = (email: string, result: Partial<Omit<ValidationResult, 'email'>> = {}): EmailRecord => ({
  id: 42,
  account_id: 'acct_x',
  email,
  email_list_id: 7,
  status: 'completed',
  awaiting: false,
  seq: 0,
  result: {
    is_valid: true,
    score: 90,
    can_connect: true,
    mx_record_count: 1,
    connectable_mx_record_count: 1,
    is_username_generic: false,
    is_alias: false,
    is_gov: false,
    is_edu: false,
    is_mil: false,
    is_free: false,
    is_subdomain: false,
    canonical_email: email,
    is_disposable: false,
    did_you_mean: null,
    is_catch_all: null,
    deliverability: 'deliverable',
    ...result,
  } as Omit<ValidationResult, 'email'>,
  created_at: 0,
});

describe('the CSV of an export', () => {
  it('has a column for every field of the email object, the contract five first', () => {
    expect(EXPORT_COLUMNS.slice(0, 5)).toEqual(['email', 'status', 'is_valid', 'deliverability', 'score']);
    expect([...EXPORT_COLUMNS].sort()).toEqual(Object.keys(presentEmail(completed('a@example.com'))).sort());
    expect(new Set(EXPORT_COLUMNS).size).toBe(EXPORT_COLUMNS.length);
  });

  it('reads back through an RFC 4180 parser exactly as written, quotes, commas and line breaks included', () => {
    // Given addresses a CSV must quote (a quoted local part may hold a comma or a quote)
    const awkward = ['"a,b"@example.com', '"say ""hi"""@example.com', 'plain@example.com', '"two\r\nlines"@example.com'];
    const emails = awkward.map((address) => presentEmail(completed(address, { did_you_mean: 'x,y@example.com' })));
    // When written and parsed back
    const rows = parse(csvHeader + emails.map(csvRow).join('')) as string[][];
    // Then each cell is the field as written, and nothing else
    expect(rows[0]).toEqual([...EXPORT_COLUMNS]);
    expect(rows.slice(1).map((row) => row[0])).toEqual(awkward);
    expect(rows.slice(1).map((row) => row[EXPORT_COLUMNS.indexOf('did_you_mean')])).toEqual(awkward.map(() => 'x,y@example.com'));
  });

  it('writes an absent score and a null as empty cells, booleans as true and false', () => {
    const pending: EmailRecord = { ...completed('p@example.com'), status: 'pending', result: null };
    const [, row] = parse(csvHeader + csvRow(presentEmail(pending))) as string[][];
    const cell = (column: (typeof EXPORT_COLUMNS)[number]) => row![EXPORT_COLUMNS.indexOf(column)];
    expect([cell('score'), cell('is_catch_all'), cell('did_you_mean')]).toEqual(['', '', '']);
    expect([cell('is_valid'), cell('deliverability'), cell('status')]).toEqual(['false', 'unknown', 'pending']);
    expect(csvHeader.endsWith('\r\n')).toBe(true);
  });
});
