import { db } from '#shared/db/client';
import { sqsClient } from '#shared/util/sqs';

export interface DynamoCall {
  command: string;
  /** Items DynamoDB read to answer: evaluated by a Query/Scan (before any filter), found by a Get or BatchGet. */
  itemsRead: number;
}

interface Output {
  Item?: unknown;
  Items?: unknown[];
  ScannedCount?: number;
  Responses?: Record<string, unknown[]>;
}

const itemsRead = (output: Output): number => {
  if (output.ScannedCount !== undefined) return output.ScannedCount;
  if (output.Items) return output.Items.length;
  if (output.Responses) return Object.values(output.Responses).reduce((n, items) => n + items.length, 0);
  return output.Item ? 1 : 0;
};

/**
 * Records every DynamoDB call the code under test makes in this process
 * (the handlers run in-process for the `handler` and `http` transports)
 * while `during` runs, so a test can hold a request to a read budget.
 */
export async function countDynamoCalls<T>(during: () => Promise<T>): Promise<{ result: T; calls: DynamoCall[] }> {
  const calls: DynamoCall[] = [];
  const name = `count-calls-${Math.random().toString(36).slice(2)}`;
  const stack = db().middlewareStack;
  stack.add(
    (next, context) => async (args) => {
      const out = await next(args);
      calls.push({ command: String(context.commandName ?? 'unknown'), itemsRead: itemsRead(out.output as Output) });
      return out;
    },
    { step: 'initialize', name },
  );
  try {
    return { result: await during(), calls };
  } finally {
    stack.remove(name);
  }
}

/**
 * Every DynamoDB and SQS call made in this process while `during` runs, as
 * `DynamoDB.GetItem`, `SQS.SendMessage`, ...: the round trips of a request.
 */
export async function countRoundTrips<T>(during: () => Promise<T>): Promise<{ result: T; calls: Record<string, number> }> {
  const sent: string[] = [];
  const name = `count-sqs-${Math.random().toString(36).slice(2)}`;
  const stack = (await sqsClient()).middlewareStack;
  stack.add(
    (next, context) => async (args) => {
      sent.push(`SQS.${String(context.commandName ?? 'unknown').replace(/Command$/, '')}`);
      return next(args);
    },
    { step: 'initialize', name },
  );
  try {
    const { result, calls } = await countDynamoCalls(during);
    const counts: Record<string, number> = {};
    for (const [command, n] of Object.entries(byCommand(calls))) counts[`DynamoDB.${command}`] = n;
    for (const call of sent) counts[call] = (counts[call] ?? 0) + 1;
    return { result, calls: counts };
  } finally {
    stack.remove(name);
  }
}

export const totalItemsRead = (calls: DynamoCall[]) => calls.reduce((n, c) => n + c.itemsRead, 0);

/** Calls per command, e.g. `{ GetItem: 2, Query: 1 }`. */
export const byCommand = (calls: DynamoCall[]) =>
  calls.reduce<Record<string, number>>((counts, c) => {
    const name = c.command.replace(/Command$/, '');
    counts[name] = (counts[name] ?? 0) + 1;
    return counts;
  }, {});

/** Commands that read (their units are read units); every other command writes. */
export const READS = /^(Get|BatchGet|Query|Scan|TransactGet)/;

type Units = { CapacityUnits?: number };
type Consumed = Units & { Table?: Units; GlobalSecondaryIndexes?: Record<string, Units> };

/**
 * The units DynamoDB bills for one call, from its `ReturnConsumedCapacity:
 * INDEXES` answer (with TOTAL, DynamoDB Local leaves the index copies out):
 * a transaction's table items twice (prepare and commit: DynamoDB Local
 * reports them once), each index copy once.
 */
export function billedUnits(command: string, consumed: unknown): number {
  let units = 0;
  for (const c of [consumed ?? []].flat() as Consumed[]) {
    const indexes = Object.values(c.GlobalSecondaryIndexes ?? {}).reduce((n, index) => n + (index.CapacityUnits ?? 0), 0);
    const table = c.Table?.CapacityUnits ?? (c.CapacityUnits ?? 0) - indexes;
    units += table * (command.startsWith('Transact') ? 2 : 1) + indexes;
  }
  return units;
}

/**
 * The write units DynamoDB bills for the writes made while `during` runs
 * (`billedUnits`). `transactionItems`: the items of the transactions.
 */
export async function billedWriteUnits<T>(during: () => Promise<T>): Promise<{ result: T; units: number; transactionItems: number }> {
  let units = 0;
  let transactionItems = 0;
  const name = `write-units-${Math.random().toString(36).slice(2)}`;
  const stack = db().middlewareStack;
  stack.add(
    (next, context) => async (args) => {
      const command = String(context.commandName ?? '');
      const write = !READS.test(command);
      const input = args.input as { ReturnConsumedCapacity?: string; TransactItems?: unknown[] };
      if (write) input.ReturnConsumedCapacity = 'INDEXES';
      const out = await next(args);
      if (!write) return out;
      if (command.startsWith('Transact')) transactionItems += input.TransactItems?.length ?? 0;
      units += billedUnits(command, (out.output as { ConsumedCapacity?: unknown }).ConsumedCapacity);
      return out;
    },
    { step: 'initialize', name },
  );
  try {
    return { result: await during(), units, transactionItems };
  } finally {
    stack.remove(name);
  }
}
