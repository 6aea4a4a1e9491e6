/**
 * DynamoDB expressions whose placeholders belong to the expression: callers
 * write tagged templates (`set\`credits = credits - ${n}\``), every
 * interpolated value becomes a `:vN` placeholder and every `attr(...)` a
 * `#nN` name placeholder, so no two parts of a command can pick the same
 * placeholder or depend on each other's.
 */

/** An attribute name to write through a placeholder: reserved words (`status`), user-given map keys. */
class AttributeName {
  constructor(readonly name: string) {}
}
export const attr = (name: string) => new AttributeName(name);

type Parts = [strings: TemplateStringsArray, ...args: unknown[]];

export interface ExpressionInput {
  ConditionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
}

/** A condition; `when` adds clauses, joined with AND. */
export class Condition {
  protected readonly names: Record<string, string> = {};
  protected readonly values: Record<string, unknown> = {};
  private readonly conditions: string[] = [];
  private count = 0;

  when(...[strings, ...args]: Parts): this {
    this.conditions.push(this.render(strings, args));
    return this;
  }

  protected render(strings: TemplateStringsArray, args: unknown[]): string {
    return strings.reduce((out, text, i) => out + text + (i < args.length ? this.placeholder(args[i]) : ''), '');
  }

  private placeholder(arg: unknown): string {
    if (arg instanceof AttributeName) {
      const existing = Object.entries(this.names).find(([, name]) => name === arg.name);
      if (existing) return existing[0];
      const key = `#n${this.count++}`;
      this.names[key] = arg.name;
      return key;
    }
    const key = `:v${this.count++}`;
    this.values[key] = arg;
    return key;
  }

  /** The command fields: condition, names and values, each only when present. */
  input(): ExpressionInput {
    return {
      ...(this.conditions.length ? { ConditionExpression: this.conditions.join(' AND ') } : {}),
      ...(Object.keys(this.names).length ? { ExpressionAttributeNames: { ...this.names } } : {}),
      ...(Object.keys(this.values).length ? { ExpressionAttributeValues: { ...this.values } } : {}),
    };
  }
}

export const condition = (...parts: Parts) => new Condition().when(...parts);

/** An update expression (SET, REMOVE, ADD, DELETE clauses) with its condition. */
export class Update extends Condition {
  private readonly clauses = { SET: [] as string[], REMOVE: [] as string[], ADD: [] as string[], DELETE: [] as string[] };

  set(...parts: Parts): this {
    return this.clause('SET', parts);
  }

  remove(...parts: Parts): this {
    return this.clause('REMOVE', parts);
  }

  add(...parts: Parts): this {
    return this.clause('ADD', parts);
  }

  delete(...parts: Parts): this {
    return this.clause('DELETE', parts);
  }

  private clause(verb: keyof Update['clauses'], [strings, ...args]: Parts): this {
    this.clauses[verb].push(this.render(strings, args));
    return this;
  }

  /**
   * The command fields. Every update also sets CHANGED_MS to `at` (the
   * write's clock time, now unless told): the placeholders are the stamp's
   * own, so no clause can collide with them, and a caller sending the
   * command may replace the value (see `stamp`).
   */
  override input(at = Date.now()): ExpressionInput & { UpdateExpression: string } {
    const clauses = Object.entries({ ...this.clauses, SET: [...this.clauses.SET, `${STAMP_NAME} = ${STAMP_VALUE}`] }).filter(
      ([, list]) => list.length > 0,
    );
    const own = super.input();
    return {
      UpdateExpression: clauses.map(([verb, list]) => `${verb} ${list.join(', ')}`).join(' '),
      ...own,
      ExpressionAttributeNames: { ...own.ExpressionAttributeNames, [STAMP_NAME]: CHANGED_MS },
      ExpressionAttributeValues: { ...own.ExpressionAttributeValues, [STAMP_VALUE]: at },
    };
  }
}

/**
 * The attribute every Put and Update of the table sets to the write's clock
 * time in milliseconds: the time of the change it makes, which the change
 * stream's own time gives only to the second on AWS and to the minute in
 * DynamoDB Local (shared/webhooks/publish.ts reads it for event times and
 * ids). Never part of what the API shows: item schemas drop it.
 */
export const CHANGED_MS = 'changed_ms';
const STAMP_NAME = '#changed_ms';
const STAMP_VALUE = ':changed_ms';

/** A write's fields with its stamp set to `at`: an item's attribute, or the value of an update's placeholder. */
export function stamp<T extends { Item?: Record<string, unknown>; ExpressionAttributeValues?: Record<string, unknown> }>(
  write: T,
  at: number,
): T {
  if (write.Item) return { ...write, Item: { ...write.Item, [CHANGED_MS]: at } };
  if (write.ExpressionAttributeValues && STAMP_VALUE in write.ExpressionAttributeValues) {
    return { ...write, ExpressionAttributeValues: { ...write.ExpressionAttributeValues, [STAMP_VALUE]: at } };
  }
  return write;
}

export const update = () => new Update();
