/**
 * What a log line may never carry: a bearer token or an email address in
 * full. Applied to every value of every line (the logger's JSON replacer), so
 * an error message or a field added later cannot leak one either.
 */

/** Field names whose values are secrets whatever they look like. */
const SECRET_KEY = /token|authorization|password|secret|credential/i;
/** The service's bearer tokens (`tok_` + 43 characters), and any `Bearer <credential>`. */
const TOKEN = /\btok_[\w-]{8,}|\b(Bearer\s+)\S+/gi;
/**
 * A run of characters an address can be made of, `@` included. Masking goes
 * run by run rather than with one pattern spanning the `@`
 * (`[^…]+@[^…]+`): that one retries from every start of a long run without
 * an `@`, quadratic in the run (an 8,000-character request path took 120 ms
 * of a logged line, 100 KB ten seconds).
 */
const RUN = /[^\s"'(),:;<>[\]{}]+/g;

export const REDACTED = '[redacted]';

/** One run: each `local@domain` in it masked, its parts being the `@`-free pieces on either side (as `a@b@c@d` → `a***@b@c***@d`). */
function maskRun(run: string): string {
  if (!run.includes('@')) return run;
  const pieces = run.split('@');
  let out = '';
  for (let i = 0; i < pieces.length; i++) {
    if (i > 0) out += '@';
    const local = pieces[i]!;
    const domain = pieces[i + 1];
    if (local !== '' && domain) {
      out += `${local[0]}***@${domain}`;
      i++;
    } else {
      out += local;
    }
  }
  return out;
}

/** `alice@example.com` -> `a***@example.com`: enough to tell domains and typos apart, not to contact anyone. Linear in the text. */
export const maskEmail = (address: string): string => address.replace(RUN, maskRun);

export function redactText(text: string): string {
  return maskEmail(text.replace(TOKEN, (_match, bearer: string | undefined) => (bearer ? `${bearer}${REDACTED}` : `tok_${REDACTED}`)));
}

/** JSON.stringify replacer. */
export function redact(key: string, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  if (key && SECRET_KEY.test(key)) return REDACTED;
  return redactText(value);
}
