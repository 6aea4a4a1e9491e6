import type { IndexName } from '#shared/db/table-definition';

/**
 * Key templates: `ACC#<acct>#LIST#<list>` is filled in from `{ acct, list }`.
 * One declaration per access pattern gives both the item's keys and the
 * partition a query reads, so the two cannot drift; docs/data-model.md
 * shows the same templates (a test compares them).
 *
 * Numbers in a sort key are zero-padded to SORTABLE_DIGITS so they sort as
 * strings; in a partition key they are written in decimal.
 */
const SORTABLE_DIGITS = 15;
const pad = (n: number) => String(n).padStart(SORTABLE_DIGITS, '0');

type Placeholders<T extends string> = T extends `${string}<${infer P}>${infer Rest}` ? P | Placeholders<Rest> : never;
type Values<T extends string> = { [P in Placeholders<T>]: string | number };
/** No argument for a template without placeholders. */
type Args<T extends string> = [Placeholders<T>] extends [never] ? [] : [values: Values<T>];

type Formats = Record<string, (value: string) => string>;

function render(template: string, args: readonly unknown[], sortKey: boolean, formats: Formats): string {
  const values = (args[0] ?? {}) as Record<string, string | number | undefined>;
  return template.replace(/<(\w+)>/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`key ${template}: no value for <${name}>`);
    if (typeof value === 'number') return sortKey ? pad(value) : String(value);
    return formats[name]?.(value) ?? value;
  });
}

/** The constant start of a template: what every key it makes begins with. */
const headOf = (template: string) => template.split('<')[0]!;

/**
 * Reads the placeholders' values back out of a key made from `template`
 * (undefined when it was not). The pattern is built on first use: most
 * functions never parse a key, and a cold start pays for every regex built.
 */
function parser(template: string): (value: string) => Record<string, string> | undefined {
  const names: string[] = [];
  let pattern: RegExp | undefined;
  const compile = () => {
    const source = template.replace(/<(\w+)>|[^<]+/g, (part, name: string | undefined) => {
      if (!name) return part.replace(/[.*+?^$|()[\]{}\\]/g, '\\$&');
      names.push(name);
      return '([^#]+)';
    });
    return new RegExp(`^${source}$`);
  };
  return (value) => {
    pattern ??= compile();
    const match = pattern.exec(value);
    return match ? Object.fromEntries(names.map((name, i) => [name, match[i + 1]!])) : undefined;
  };
}

/** An item's own key (pk, sk) and the table partition it lives in. */
export function tableKey<PK extends string, SK extends string>(pk: PK, sk: SK, formats: Formats = {}) {
  const parsePk = parser(pk);
  const parseSk = parser(sk);
  return {
    templates: { pk, sk },
    key: (...values: Args<PK | SK>) => ({
      pk: render(pk, values, false, formats),
      sk: render(sk, values, true, formats),
    }),
    partition: (...values: Args<PK>) => render(pk, values, false, formats),
    /** What all sort keys of this kind start with (a `begins_with` condition). */
    skPrefix: headOf(sk),
    /** The values a key of this kind was made from (a change stream reports keys, not values); undefined for another kind. */
    parse: (key: { pk: string; sk: string }) => {
      const [p, s] = [parsePk(key.pk), parseSk(key.sk)];
      return p && s ? ({ ...p, ...s } as Record<Placeholders<PK | SK>, string>) : undefined;
    },
  };
}

/** An entry in a GSI: the attributes an item carries to be in it, and the partition a query reads. */
export function indexKey<I extends IndexName, PK extends string, SK extends string>(index: I, pk: PK, sk: SK, formats: Formats = {}) {
  return {
    index,
    templates: { pk, sk },
    entry: (...values: Args<PK | SK>) =>
      ({
        [`${index}pk`]: render(pk, values, false, formats),
        [`${index}sk`]: render(sk, values, true, formats),
      }) as { [A in `${I}pk` | `${I}sk`]: string },
    partition: (...values: Args<PK>) => render(pk, values, false, formats),
    /** The sort key for these values, as a bound of a range query. */
    sortKey: (...values: Args<SK>) => render(sk, values, true, formats),
  };
}
