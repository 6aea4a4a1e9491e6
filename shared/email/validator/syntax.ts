import net from 'node:net';
import type { SyntaxCheck } from '../result.ts';
import { domainToAscii, loadIdna, needsIdna } from './idna.ts';
import { propertyPattern } from '#shared/util/property-pattern';

/**
 * Address syntax: what a client can fix by retyping, checked without the network.
 *
 * Accepted form: `local@domain`, split on the LAST `@` (the domain can never
 * contain one, so `a@b@c.com` has local part `a@b`, which is then rejected).
 *
 * - Local part: an RFC 5322 dot-atom (atext runs separated by single dots),
 *   extended by RFC 6531/6532 to any non-ASCII character except controls,
 *   separators (spaces), surrogates, private-use and invisible format
 *   characters (ZWNJ/ZWJ stay allowed: some scripts need them). At most 64
 *   octets of UTF-8.
 * - Quoted local parts (`"john doe"@example.com`) are rejected with their own
 *   reason: mailbox providers do not hand them out, they show up mostly in
 *   injection payloads, and downstream tools (CSV exports, SMTP libraries,
 *   CRMs) treat them inconsistently. Comments (`john(x)@...`) are rejected too.
 * - Domain: a host name, Unicode (IDN) allowed. It is converted to its
 *   A-label form under the IDNA rules of idna.ts (the same on every Node
 *   version), and that form must be labels of 1..63 octets, at most 253
 *   octets in all, with at least one dot and a non-numeric top-level label.
 *   Length limits count the A-label form because that is what travels in DNS.
 * - IP-address domains (`a@1.2.3.4`, `a@[1.2.3.4]`) are rejected: nobody hands
 *   out such addresses, and they would let a caller point the SMTP probe at
 *   any address it likes.
 * - Nothing is trimmed: a space anywhere makes the address invalid.
 *
 * checkSyntax is synchronous; `prepareSyntax` loads beforehand what it needs
 * for a batch (tr46, only when a domain is internationalized or has an A-label).
 */
export const MAX_LOCAL_OCTETS = 64;
export const MAX_DOMAIN_OCTETS = 253;
export const MAX_LABEL_OCTETS = 63;
export const MAX_ADDRESS_OCTETS = 254;

// RFC 5322 atext, ASCII part.
const ATEXT = /^[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]$/;
// Non-ASCII characters that are never part of a real mailbox name.
// U+FFFD is what a body's invalid UTF-8 decodes to (API Gateway hands Lambda text): never a character anyone typed.
const FORBIDDEN_UNICODE = propertyPattern('[\\p{Cc}\\p{Cs}\\p{Co}\\p{Z}\\uFFFD]');
const FORMAT_CHARACTER = propertyPattern('\\p{Cf}');
const JOINERS = new Set(['\u200c', '\u200d']);
// eslint-disable-next-line no-control-regex -- the ASCII range, NUL included, is the point
const NON_ASCII = /[^\x00-\x7f]/;
/**
 * The longest domain, as typed, that can still be within 253 octets as
 * A-labels. An ASCII domain keeps its length; an internationalized one only
 * grows (`xn--` and at least one character per code point), except where the
 * mapping composes a few code points into one (a base letter and its marks,
 * Hangul jamo): four to one is beyond any of those. Anything longer is
 * refused before the IDNA conversion, whose punycode decoding is quadratic
 * in a label (a 125,000-character domain cost 0.2 to 0.6 s).
 */
const MAX_DOMAIN_INPUT = 4 * MAX_DOMAIN_OCTETS;
// A top-level label that reads as a number, decimal or hex (how URL parsers see IPv4 parts).
const NUMERIC_LABEL = /^(\d+|0x[0-9a-f]*)$/i;

const fail = (reason: string): SyntaxCheck => ({ ok: false, reason });

/** Loads what checkSyntax needs for these addresses: nothing for all-ASCII domains without `xn--` labels. */
export async function prepareSyntax(addresses: readonly unknown[]): Promise<void> {
  const needed = addresses.some((address) => typeof address === 'string' && needsIdna(address.slice(address.lastIndexOf('@') + 1)));
  if (needed) await loadIdna();
}

export function checkSyntax(address: unknown): SyntaxCheck {
  if (typeof address !== 'string') return fail('must be a string');
  if (address === '') return fail('address is empty');
  if (!address.isWellFormed()) return fail('is not valid Unicode text (a lone surrogate)');
  const at = address.lastIndexOf('@');
  if (at === -1) return fail('missing @');
  const local = address.slice(0, at);
  const domain = address.slice(at + 1);

  const localProblem = checkLocalPart(local);
  if (localProblem) return fail(localProblem);

  const checked = checkDomain(domain);
  if ('reason' in checked) return fail(checked.reason);

  if (Buffer.byteLength(local, 'utf8') + 1 + checked.ascii.length > MAX_ADDRESS_OCTETS) {
    return fail(`address is longer than ${MAX_ADDRESS_OCTETS} characters`);
  }
  return { ok: true, local, domain, asciiDomain: checked.ascii };
}

/** A reason when the local part is unacceptable, else undefined. */
function checkLocalPart(local: string): string | undefined {
  if (local === '') return 'local part is empty';
  // Length first, so the checks below walk at most 64 characters (UTF-8 takes at least one octet per UTF-16 unit).
  if (local.length > MAX_LOCAL_OCTETS) return longLocalPart(local);
  if (local.length >= 2 && local.startsWith('"') && local.endsWith('"')) {
    return 'quoted local parts (like "john doe") are not supported';
  }
  if (local.startsWith('.')) return 'local part starts with a dot';
  if (local.endsWith('.')) return 'local part ends with a dot';
  if (local.includes('..')) return 'local part has two dots in a row';
  for (const char of local) {
    if (char === '.') continue;
    if (char.charCodeAt(0) < 0x80) {
      if (!ATEXT.test(char)) return `local part contains an invalid character ${describe(char)}`;
    } else if (FORBIDDEN_UNICODE.test(char) || (FORMAT_CHARACTER.test(char) && !JOINERS.has(char))) {
      return `local part contains an invalid character ${describe(char)}`;
    }
  }
  return Buffer.byteLength(local, 'utf8') > MAX_LOCAL_OCTETS ? longLocalPart(local) : undefined;
}

function longLocalPart(local: string): string {
  return Buffer.byteLength(local, 'utf8') === local.length
    ? `local part is longer than ${MAX_LOCAL_OCTETS} characters`
    : `local part is longer than ${MAX_LOCAL_OCTETS} octets in UTF-8`;
}

type DomainCheck = { ascii: string } | { reason: string };
const reject = (reason: string): DomainCheck => ({ reason });

/** The lower-case A-label form of the domain, or the reason it is unacceptable. */
function checkDomain(domain: string): DomainCheck {
  if (domain === '') return reject('domain is empty');
  // Before any conversion, whose cost grows faster than the domain: see MAX_DOMAIN_INPUT.
  if (domain.length > MAX_DOMAIN_OCTETS && (domain.length > MAX_DOMAIN_INPUT || !NON_ASCII.test(domain))) {
    return reject(`domain is longer than ${MAX_DOMAIN_OCTETS} characters`);
  }
  if (domain.startsWith('[')) return reject('IP address literals like [192.0.2.1] are not accepted as a domain');
  if (net.isIP(domain)) return reject('domain is an IP address; only domain names are accepted');
  for (const char of domain) {
    // Invisible format characters (zero-width space, soft hyphen) would be
    // silently dropped by the IDN mapping: reject them rather than accept a
    // domain that differs from what the user sees. The joiners are not
    // dropped, and IDNA allows them where a script needs them (ContextJ).
    const bad =
      char.charCodeAt(0) < 0x80
        ? !/[A-Za-z0-9.-]/.test(char)
        : FORBIDDEN_UNICODE.test(char) || (FORMAT_CHARACTER.test(char) && !JOINERS.has(char));
    if (bad) return reject(`domain contains an invalid character ${describe(char)}`);
  }
  const dots = dotProblem(domain);
  if (dots) return reject(dots);

  const converted = domainToAscii(domain);
  if ('reason' in converted) return converted;
  const { ascii } = converted;
  // The mapping can still change the dots (a full-width dot becomes '.'), so check again.
  const asciiDots = dotProblem(ascii);
  if (asciiDots) return reject(asciiDots);
  if (ascii.length > MAX_DOMAIN_OCTETS) return reject(`domain is longer than ${MAX_DOMAIN_OCTETS} characters`);

  const labels = ascii.split('.');
  if (labels.length < 2) return reject('domain must contain at least one dot');
  const long = labels.find((label) => label.length > MAX_LABEL_OCTETS);
  if (long) return reject(`domain label '${shorten(long)}' is longer than ${MAX_LABEL_OCTETS} characters`);
  const tld = labels[labels.length - 1]!;
  if (NUMERIC_LABEL.test(tld)) return reject(`top-level domain '${tld}' is numeric`);
  return { ascii };
}

function dotProblem(domain: string): string | undefined {
  if (domain.startsWith('.')) return 'domain starts with a dot';
  if (domain.endsWith('.')) return 'domain ends with a dot';
  if (domain.includes('..')) return `domain '${domain}' has an empty label (two dots in a row)`;
  return undefined;
}

const PRINTABLE = propertyPattern('[\\p{L}\\p{N}\\p{P}\\p{S}]');

/** Printable characters quoted, everything else as a code point, so a reason never carries invisible text. */
function describe(char: string): string {
  const code = char.codePointAt(0)!;
  const hex = `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
  if (code === 0x20) return `' ' (space, ${hex})`;
  if (PRINTABLE.test(char)) return `'${char}'`;
  return hex;
}

function shorten(label: string): string {
  return label.length > 20 ? `${label.slice(0, 20)}…` : label;
}
