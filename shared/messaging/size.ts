/**
 * The stored-size bound of a message. A page of messages must fit in one
 * Lambda response (6 MB), where the JSON body travels as a JSON string, so
 * sizes are counted in that form: a `"` costs 4 bytes there, a control
 * character 7.
 *
 * The text is bounded by its schema (4,096 characters: at most 28 KiB so
 * counted). Reactions and attachments share EXTRAS budget, kept as a running
 * total on the message (`extras_bytes`) that every write adjusts atomically,
 * so 100 messages (a full page) stay under 5 MB.
 */
export const MAX_EXTRAS_BYTES = 16 * 1024;

/** Bytes a JSON value takes inside the Lambda response (without the enclosing quotes). */
export const encodedBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(JSON.stringify(value))) - 2;

/** One element of a JSON array or object: the value and its comma. */
export const elementBytes = (value: unknown) => encodedBytes(value) + 1;
