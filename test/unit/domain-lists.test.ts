import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { DISPOSABLE_DOMAINS, PROVIDER_DOMAINS } from '#shared/email/validator/domain-lists.generated';
import { GENERATED_FILE, renderDomainLists } from '../../scripts/domain-lists.ts';

const require = createRequire(import.meta.url);
const lines = (list: string) => list.split('\n');

describe('the generated domain lists', () => {
  it('are what `npm run lists` writes from the installed packages (run it after updating mailchecker or email-providers)', () => {
    // Compared as a boolean: a failure would otherwise print a megabyte of diff.
    expect(readFileSync(GENERATED_FILE, 'utf8') === renderDomainLists(), 'stale: run `npm run lists` and commit the file').toBe(true);
  });

  it('hold exactly the domains of the packages, lower-case, sorted and once each', () => {
    const disposable = (require('mailchecker') as { blacklist(): Set<string> }).blacklist();
    const providers = (require('email-providers/all.json') as string[]).map((d) => d.toLowerCase());
    expect(new Set(lines(DISPOSABLE_DOMAINS))).toEqual(disposable);
    expect(new Set(lines(PROVIDER_DOMAINS))).toEqual(new Set(providers));
    for (const list of [DISPOSABLE_DOMAINS, PROVIDER_DOMAINS]) {
      expect(lines(list)).toEqual([...new Set(lines(list))].sort());
      expect(list).toBe(list.toLowerCase());
    }
  });
});
