import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { keys } from '#shared/db/keys';

/** The key design is written twice, in docs/data-model.md and in shared/db/keys.ts: these tests hold the two equal. */
const doc = readFileSync(new URL('../../docs/data-model.md', import.meta.url), 'utf8');

/** The rows of the first table under a `## heading`, split into cells. */
function tableRows(heading: string): string[][] {
  const section = doc.split(`\n## ${heading}\n`)[1]?.split('\n## ')[0] ?? '';
  return section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('|---'))
    .slice(1)
    .map((line) => line.split(' | ').map((cell) => cell.replace(/^\| |\s*\|$/g, '')));
}

const codeSpans = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
const pairs = (cell: string) => [...cell.matchAll(/`([^`]+)` \/ `([^`]+)`/g)].map((m) => `${m[1]} / ${m[2]}`);

const declarations = Object.entries(keys);
const tableKeys = declarations.flatMap(([name, d]) => ('key' in d ? [{ name, pk: d.templates.pk, sk: d.templates.sk }] : []));
const indexKeys = declarations.flatMap(([name, d]) =>
  'entry' in d ? [{ name, index: d.index, pair: `${d.templates.pk} / ${d.templates.sk}` }] : [],
);

/** `<collection>` is any collection's pk: the doc may show a template with it or with each concrete collection. */
const collections = [keys.accountEmails, keys.accountLists, keys.list].map((d) => d.templates.pk);
const forms = (template: string) =>
  template.includes('<collection>') ? [template, ...collections.map((c) => template.replace('<collection>', c))] : [template];

const entityRows = tableRows('Entities and key patterns').map(([entity, pk, sk, gsi1, gsi2]) => ({
  entity: entity!,
  pk: codeSpans(pk!),
  sk: codeSpans(sk!),
  gsi1: pairs(gsi1!),
  gsi2: pairs(gsi2!),
}));
const indexRows = tableRows('Indexes').map(([index, pk, sk]) => ({
  index: codeSpans(index!)[0]!,
  pair: `${codeSpans(pk!)[0]} / ${codeSpans(sk!)[0]}`,
}));

describe('docs/data-model.md against the key declarations', () => {
  it('reads both tables of the doc', () => {
    expect(entityRows.length).toBeGreaterThanOrEqual(tableKeys.length);
    expect(indexRows.length).toBeGreaterThanOrEqual(indexKeys.length);
  });

  it('shows every item key declared in code, and declares every item key it shows', () => {
    // Given each declaration's templates, when looked up in the entity table, then a row shows them as its pk and sk
    for (const { name, pk, sk } of tableKeys) {
      expect(
        entityRows.some((row) => forms(pk).some((f) => row.pk.includes(f)) && row.sk.includes(sk)),
        `${name}: ${pk} / ${sk}`,
      ).toBe(true);
    }
    // And each row's pk and sk (its first template) is a declaration's
    for (const row of entityRows) {
      const declared = tableKeys.some(({ pk, sk }) => forms(pk).includes(row.pk[0]!) && sk === row.sk[0]);
      expect(declared, `${row.entity}: ${row.pk[0]} / ${row.sk[0]}`).toBe(true);
    }
  });

  it('shows every index entry declared in code, in both tables, and declares every one it shows', () => {
    for (const { name, index, pair } of indexKeys) {
      const shown = forms(pair);
      expect(
        entityRows.some((row) => row[index].some((p) => shown.includes(p))),
        `${name} in the entity table`,
      ).toBe(true);
      expect(
        indexRows.some((row) => row.index === index && shown.includes(row.pair)),
        `${name} in the index table`,
      ).toBe(true);
    }
    const declared = (index: string, pair: string) => indexKeys.some((d) => d.index === index && forms(d.pair).includes(pair));
    for (const row of entityRows) {
      for (const index of ['gsi1', 'gsi2'] as const)
        for (const pair of row[index]) expect(declared(index, pair), `${row.entity}: ${pair}`).toBe(true);
    }
    for (const row of indexRows) expect(declared(row.index, row.pair), `${row.index}: ${row.pair}`).toBe(true);
  });

  it('writes the keys the templates show: strings as given, numbers padded in sort keys only', () => {
    // Given each placeholder filled with its own name, when the key is made, then it is the template itself
    for (const { name, pk, sk } of tableKeys) {
      const values = Object.fromEntries([...`${pk}${sk}`.matchAll(/<(\w+)>/g)].map((m) => [m[1]!, `<${m[1]}>`]));
      const make = (keys[name as keyof typeof keys] as { key: (v: Record<string, string>) => { pk: string; sk: string } }).key;
      expect(make(values), name).toEqual({ pk, sk });
    }
    // And numbers: plain decimal in a partition key, 15 digits in a sort key
    expect(keys.list.key({ acct: 'a', list: 42 })).toEqual({ pk: 'ACC#a#LIST#42', sk: 'LIST' });
    expect(keys.members.entry({ collection: 'ACC#a#LIST#42', seq: 7 })).toEqual({
      gsi1pk: 'ACC#a#LIST#42#MEMBERS',
      gsi1sk: '000000000000007',
    });
    expect(keys.block.key({ collection: 'C', block: 3 }).pk).toBe('C#BLOCK#3');
    expect(keys.blocks.entry({ collection: 'C', block: 3 }).gsi1sk).toBe('000000000000003');
    // And an address guard is the same key whatever the address's case
    expect(keys.listAddress.key({ acct: 'a', list: 1, address: 'Bob@Example.COM' }).pk).toBe('ACC#a#LIST#1#ADDR#bob@example.com');
  });
});
