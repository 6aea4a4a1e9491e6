import { checkSyntax } from '#shared/email/validator/syntax';
import { rejectedEntry } from '#shared/email/present';

export interface Accepted {
  index: number;
  address: string;
}

/**
 * Splits a submitted batch into syntactically valid addresses and error
 * entries, by position. In a list, a repeat of an address within the same
 * request is a duplicate like one already stored.
 */
export function classifyEntries(entries: unknown[], dedupe: boolean) {
  const accepted: Accepted[] = [];
  const errors = new Map<number, ReturnType<typeof rejectedEntry>>();
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

/** The response entries in request order: the stored email or the error entry at each position. */
export const mergeEntries = (count: number, errors: Map<number, unknown>, emails: Map<number, unknown>) =>
  Array.from({ length: count }, (_, i) => emails.get(i) ?? errors.get(i));
