import { db } from '#shared/db/client';

/**
 * Counts the DynamoDB commands this process sends while `run` runs, by
 * name, through a middleware on the shared document client.
 */
export async function countDbCalls<T>(run: () => Promise<T>): Promise<{ result: T; calls: Record<string, number>; total: number }> {
  const calls: Record<string, number> = {};
  const name = `count-${Math.random().toString(36).slice(2)}`;
  db().middlewareStack.add(
    (next, context) => async (args) => {
      const command = String(context.commandName ?? 'unknown').replace(/Command$/, '');
      calls[command] = (calls[command] ?? 0) + 1;
      return next(args);
    },
    { step: 'initialize', name },
  );
  try {
    const result = await run();
    return { result, calls, total: Object.values(calls).reduce((a, b) => a + b, 0) };
  } finally {
    db().middlewareStack.remove(name);
  }
}
