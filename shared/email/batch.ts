import { checkSyntax, prepareSyntax } from '#shared/email/validator/syntax';
import type { EmailRecord } from '#shared/data/emails';

/** A batch entry that could not be accepted, and why. */
export interface Rejected {
  email: unknown;
  error: string;
}

export const rejectedEntry = (email: unknown, error: string): Rejected => ({ email, error });

/** A batch's answer, entry by entry in the order sent: the stored email, or why it was not stored. */
export type Entry = EmailRecord | Rejected;

export const mergeEntries = (count: number, errors: Map<number, Rejected>, emails: Map<number, EmailRecord>): Entry[] =>
  Array.from({ length: count }, (_, i) => emails.get(i) ?? errors.get(i)!);

export interface Accepted {
  index: number;
  address: string;
}

/**
 * Splits a submitted batch into syntactically valid addresses and error
 * entries, by position. In a list, a repeat of an address within the same
 * request is a duplicate like one already stored.
 */
export async function classifyEntries(entries: unknown[], dedupe: boolean) {
  await prepareSyntax(entries);
  const accepted: Accepted[] = [];
  const errors = new Map<number, Rejected>();
  const seen = new Set<string>();
  entries.forEach((entry, index) => {
    const syntax = checkSyntax(entry);
    if (!syntax.ok) {
      errors.set(index, rejectedEntry(entry, syntax.reason));
      return;
    }
    const address = entry as string;
    if (dedupe && seen.has(address.toLowerCase())) {
      errors.set(index, rejectedEntry(entry, 'duplicate'));
      return;
    }
    seen.add(address.toLowerCase());
    accepted.push({ index, address });
  });
  return { accepted, errors };
}
