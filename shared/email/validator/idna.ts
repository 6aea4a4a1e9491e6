import type * as Tr46 from 'tr46';
import { commonJsExports } from '#shared/util/commonjs';
import { loadedOnFirstUse } from '#shared/util/first-use';
import { propertyPattern } from '#shared/util/property-pattern';

/**
 * Internationalized domain names (IDNA) for mail domains, done by `tr46`
 * (UTS #46 with its own Unicode tables) rather than `node:url`. The WHATWG URL
 * standard now lets ASCII hosts through unchecked, so from Node 24 on
 * `url.domainToASCII('xn--zz.com')` answers 'xn--zz.com' where Node 20 and 22
 * answered '' (invalid punycode); the majors also differ on the Bidi rule. A
 * mail domain must be valid DNS, not merely something a browser would load,
 * so every label is checked the same way on every Node.
 *
 * The rules, strictest form of UTS #46 (what IDNA2008 registries apply):
 * - A-labels (`xn--…`) decode as punycode to a label with non-ASCII in it,
 *   and re-encode to the same A-label (RFC 5891 §5.3).
 * - Nontransitional mapping (case, full-width forms, `ß` kept), NFC, only
 *   code points UTS #46 calls valid, no leading combining mark.
 * - Hyphens: not first or last, not `--` in positions 3-4 unless the label is
 *   an A-label (CheckHyphens); ASCII must be letters, digits and hyphens (STD3).
 * - ContextJ (zero-width joiners, CheckJoiners), the Bidi rule (RFC 5893,
 *   CheckBidi), and the ContextO rules of RFC 5892 that tr46 leaves out.
 *
 * tr46 and its Unicode tables (about 230 KiB) are loaded only for a domain
 * that needs them: one with a non-ASCII character or an `xn--` label. For
 * any other domain the rules above come down to lower-casing and the hyphen
 * rule, which the ASCII path here applies without tr46 and with the same
 * answers (test/unit/email-idna.test.ts runs both over a table). Callers
 * await `loadIdna()` (through `prepareSyntax`) before the synchronous checks.
 */
const STRICT: Tr46.ToASCIIOptions = {
  // The hyphen rules are checked here (hyphenProblem): IDNA's '--' at 3-4 only in U-labels.
  checkHyphens: false,
  checkBidi: true,
  checkJoiners: true,
  useSTD3ASCIIRules: true,
  transitionalProcessing: false,
  // Lengths are checked by the caller, which names the label that is too long.
  verifyDNSLength: false,
};

/** The characters UTS #46 maps to a label separator. */
const DOTS = /[.\u3002\uff0e\uff61]/;
// eslint-disable-next-line no-control-regex -- the ASCII range, NUL included, is the point
const NON_ASCII = /[^\x00-\x7f]/;
const LDH = /^[a-z0-9-]*$/;

export type IdnaResult = { ascii: string } | { reason: string };

// Letters, digits, hyphens and dots only: the domains the ASCII path may answer.
const PLAIN_ASCII = /^[A-Za-z0-9.-]*$/;
const A_LABEL = /(^|\.)xn--/i;

const tr46 = loadedOnFirstUse(
  async (): Promise<typeof Tr46> => commonJsExports(await import('tr46'), 'toASCII'),
  'tr46 is not loaded: await loadIdna() (or prepareSyntax) before checking an internationalized domain',
);

/** Loads tr46, once per process. */
export const loadIdna = tr46.load;
const uts46 = tr46.get;

/** Whether the domain needs tr46: it has a non-ASCII character, or an A-label to decode and check. */
export function needsIdna(domain: string): boolean {
  return !PLAIN_ASCII.test(domain) || A_LABEL.test(domain);
}

/** The A-label (ASCII) form of a domain, or the first IDNA rule it breaks. */
export function domainToAscii(domain: string): IdnaResult {
  return needsIdna(domain) ? domainToAsciiByUts46(domain) : plainDomainToAscii(domain);
}

/**
 * The ASCII path: what the UTS #46 path answers for a domain of letters,
 * digits, hyphens and dots without an A-label. Mapping only lower-cases such
 * a domain, and of the validity rules only the hyphen rule can fail (STD3
 * holds, there is nothing to decode, no joiner, no right-to-left text).
 */
export function plainDomainToAscii(domain: string): IdnaResult {
  const ascii = domain.toLowerCase();
  for (const label of ascii.split('.')) {
    const problem = hyphenProblem(label);
    if (problem) return { reason: problem };
  }
  return { ascii };
}

/** The full UTS #46 path, through tr46 (loaded by `loadIdna`). */
export function domainToAsciiByUts46(domain: string): IdnaResult {
  const { toASCII, toUnicode } = uts46();
  for (const label of domain.split(DOTS)) {
    const problem = aLabelProblem(label.normalize('NFKC').toLowerCase());
    if (problem) return { reason: problem };
  }
  // Mapped and decoded: the labels as a person reads them.
  for (const label of toUnicode(domain).domain.split('.')) {
    const problem = hyphenProblem(label) ?? contextProblem(label);
    if (problem) return { reason: problem };
  }
  const ascii = toASCII(domain, STRICT);
  return ascii === null ? { reason: whyNot(domain) } : { ascii };
}

/**
 * The Unicode form of a valid A-label domain, for display. Without an
 * A-label it is the domain itself: then tr46 is not needed, and otherwise
 * checkSyntax of the same address has loaded it.
 */
export function domainToDisplay(asciiDomain: string): string {
  return /^[a-z0-9.-]*$/.test(asciiDomain) && !A_LABEL.test(asciiDomain) ? asciiDomain : domainToDisplayByUts46(asciiDomain);
}

export function domainToDisplayByUts46(asciiDomain: string): string {
  const { domain, error } = uts46().toUnicode(asciiDomain, STRICT);
  return error ? asciiDomain : domain;
}

function aLabelProblem(label: string): string | undefined {
  if (!label.startsWith('xn--')) return undefined;
  const { toASCII, toUnicode } = uts46();
  // tr46 hands a label back unchanged when its punycode does not decode: a
  // decoded label is always shorter than the `xn--` form it came from.
  const decoded = toUnicode(label).domain;
  if (decoded === label) return `domain label '${label}' is not valid punycode`;
  if (!NON_ASCII.test(decoded)) return `domain label '${label}' does not encode any non-ASCII character`;
  const again = toASCII(decoded);
  if (again !== null && again !== label) {
    return `domain label '${label}' is not in canonical form (it decodes to '${decoded}', whose A-label is '${again}')`;
  }
  return undefined; // other faults of the decoded label are found with the whole domain
}

/**
 * A label's hyphens: never first or last (RFC 5321's Ldh-str), and, in a
 * label of Unicode text, not `--` in the third and fourth positions (IDNA,
 * RFC 5891 4.2.3.1). An LDH label may have them there (`r3---sn-…`): a host
 * name RFC 5321 takes, which only IDNA's own rules would refuse.
 */
function hyphenProblem(label: string): string | undefined {
  if (label.startsWith('-') || label.endsWith('-')) return `domain label '${label}' starts or ends with a hyphen`;
  if (NON_ASCII.test(label) && label.slice(2, 4) === '--') {
    return `domain label '${label}' has '--' in the third and fourth positions, which only A-labels (xn--) may have`;
  }
  return undefined;
}

const GREEK = propertyPattern('\\p{Script=Greek}');
const HEBREW = propertyPattern('\\p{Script=Hebrew}');
const HIRAGANA_KATAKANA_HAN = propertyPattern('[\\p{Script=Hiragana}\\p{Script=Katakana}\\p{Script=Han}]');

/**
 * RFC 5892 Appendix A.3-A.9: code points IDNA2008 allows only next to
 * certain others. UTS #46 does not check them; registries do.
 */
function contextProblem(label: string): string | undefined {
  const chars = [...label];
  const broken = chars.find((char, i) => {
    const before = chars[i - 1] ?? '';
    const after = chars[i + 1] ?? '';
    switch (char) {
      case '\u00b7': // MIDDLE DOT, Catalan "l·l"
        return before !== 'l' || after !== 'l';
      case '\u0375': // GREEK LOWER NUMERAL SIGN
        return !GREEK.test(after);
      case '\u05f3': // HEBREW PUNCTUATION GERESH
      case '\u05f4': // HEBREW PUNCTUATION GERSHAYIM
        return !HEBREW.test(before);
      case '\u30fb': // KATAKANA MIDDLE DOT
        return !HIRAGANA_KATAKANA_HAN.test(label.replaceAll('\u30fb', ''));
      default: // Arabic-Indic digits and Extended Arabic-Indic digits must not mix
        return /[\u0660-\u0669]/.test(char) ? /[\u06f0-\u06f9]/.test(label) : false;
    }
  });
  if (broken === undefined) return undefined;
  const code = `U+${broken.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
  return `domain label '${label}' has ${code} where IDNA2008 does not allow it (RFC 5892)`;
}

/** Which rule the strict conversion broke: relax one at a time to find out. */
function whyNot(domain: string): string {
  const { toASCII } = uts46();
  const passesWithout = (option: keyof Tr46.ToASCIIOptions) => toASCII(domain, { ...STRICT, [option]: false }) !== null;
  if (passesWithout('useSTD3ASCIIRules')) {
    const label =
      toASCII(domain)!
        .split('.')
        .find((l) => !LDH.test(l)) ?? domain;
    return `domain label '${label}' may hold only letters, digits and hyphens`;
  }
  if (passesWithout('checkBidi')) {
    return `domain '${domain}' breaks the IDNA rule for right-to-left text (RFC 5893)`;
  }
  if (passesWithout('checkJoiners')) {
    // Named by code point: the joiners are invisible.
    const joiner = domain.includes('\u200c') ? 'U+200C (zero-width non-joiner)' : 'U+200D (zero-width joiner)';
    return `domain has ${joiner} where IDNA does not allow it (RFC 5892)`;
  }
  return `domain '${domain}' is not a valid internationalized domain name`;
}
