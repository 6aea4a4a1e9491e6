import * as v from 'valibot';

/** A JSON object: not null, not an array. */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A nested object (an attachment, a reaction map). valibot's objects and
 * records take arrays too; a client that sends a list where one object
 * belongs gets "must be an object", as for any other wrong kind of value.
 */
export function nested<S extends v.GenericSchema<Record<string, unknown>>>(schema: S) {
  return v.pipe(v.custom<Record<string, unknown>>(isRecord, 'must be an object'), schema);
}
