import * as v from 'valibot';

/** A queue message's body checked against its schema: undefined when it is not JSON or does not match (the worker logs and drops it). */
export function parseMessage<S extends v.GenericSchema>(schema: S, body: string): v.InferOutput<S> | undefined {
  try {
    const parsed = v.safeParse(schema, JSON.parse(body));
    return parsed.success ? parsed.output : undefined;
  } catch {
    return undefined;
  }
}
