/**
 * What a log line may never carry: a bearer token or an email address in
 * full. Applied to every value of every line (the logger's JSON replacer), so
 * an error message or a field added later cannot leak one either.
 */

/** Field names whose values are secrets whatever they look like. */
const SECRET_KEY = /token|authorization|password|secret|credential/i;
/** The service's bearer tokens (`tok_` + 43 characters), and any `Bearer <credential>`. */
const TOKEN = /\btok_[A-Za-z0-9_-]{8,}|\b(Bearer\s+)\S+/gi;
/** Anything shaped like `local@domain`: masked to its first character and the domain. */
const EMAIL = /([^\s@"'<>()[\]{},;:]+)@([^\s@"'<>()[\]{},;:]+)/g;

export const REDACTED = '[redacted]';

/** `alice@example.com` -> `a***@example.com`: enough to tell domains and typos apart, not to contact anyone. */
export const maskEmail = (address: string): string =>
  address.replace(EMAIL, (_, local: string, domain: string) => `${local[0]}***@${domain}`);

export function redactText(text: string): string {
  return maskEmail(text.replace(TOKEN, (_match, bearer: string | undefined) => (bearer ? `${bearer}${REDACTED}` : `tok_${REDACTED}`)));
}

/** JSON.stringify replacer. */
export function redact(key: string, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  if (key && SECRET_KEY.test(key)) return REDACTED;
  return redactText(value);
}
