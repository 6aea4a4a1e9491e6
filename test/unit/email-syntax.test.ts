import { beforeAll, describe, expect, it } from 'vitest';
import { checkSyntax, loadValidator } from '#shared/email/validator/index';

const local64 = 'a'.repeat(64);
const label63 = 'l'.repeat(63);
// 64 + 1 + 189 = 254 octets: the longest address allowed.
const domain189 = `${'d'.repeat(63)}.${'e'.repeat(63)}.${'f'.repeat(57)}.com`;
// 59 characters as typed, 66 as the A-label that DNS carries.
const uLabel59 = `${'a'.repeat(58)}ü`;
// 20 ideographs: 20 characters as typed, a 49-character A-label.
const ideographs20 = Array.from({ length: 20 }, (_, i) => String.fromCodePoint(0x4e00 + i * 37)).join('');

/** [address, ascii domain] — accepted. */
const valid: [string, string][] = [
  ['user@example.com', 'example.com'],
  ['user+tag@example.com', 'example.com'],
  ['first.last@example.com', 'example.com'],
  ['a@b.co', 'b.co'],
  ['USER@EXAMPLE.COM', 'example.com'],
  ["o'brien@example.ie", 'example.ie'],
  ['x!#$%&*+/=?^_`{|}~-y@example.org', 'example.org'],
  ['ユーザー@例え.jp', 'xn--r8jz45g.jp'],
  ['Ä@b.de', 'b.de'],
  ['x@xn--bcher-kva.example', 'xn--bcher-kva.example'],
  // An LDH label may have '--' in positions 3-4 (RFC 5321; real host names such as r3---sn-…): IDNA reserves that only
  // for U-labels
  ['a@ab--cd.com', 'ab--cd.com'],
  ['a@R1---SN.example', 'r1---sn.example'],
  ['x@bücher.example', 'xn--bcher-kva.example'],
  ['a@例え。jp', 'xn--r8jz45g.jp'], // ideographic full stop is a dot in IDNA
  ['a@ＥＸＡＭＰＬＥ.com', 'example.com'], // full-width letters map to ASCII
  ['a@💩.la', 'xn--ls8h.la'],
  [`${local64}@example.com`, 'example.com'],
  [`a@${label63}.com`, `${label63}.com`],
  [`${local64}@${domain189}`, domain189],
  ['a@mail.example.co.uk', 'mail.example.co.uk'],
  ['a@my-domain.com', 'my-domain.com'],
  ['a@1example.com', '1example.com'],
  ['a@123.example', '123.example'],
  ['a@example.xn--p1ai', 'example.xn--p1ai'],
  ['a\u200db@example.com', 'example.com'], // a zero-width joiner is part of some scripts' words
  // IDNA: A-labels are checked the same way on every Node version.
  ['a@XN--BCHER-KVA.example', 'xn--bcher-kva.example'], // A-labels are case-insensitive
  ['a@xn--BcHer-kva.example', 'xn--bcher-kva.example'],
  ['a@bücher。example', 'xn--bcher-kva.example'],
  ['a@faß.de', 'xn--fa-hia.de'], // nontransitional: ß stays ß (not 'fass.de')
  ['a@example.cöm', 'example.xn--cm-fka'],
  ['a@❤️.ws', 'xn--qei.ws'], // the emoji variation selector is ignored by the mapping
  ['a@דוגמה.ישראל', 'xn--6dbbec0c.xn--4dbrk0ce'], // right-to-left labels that keep the Bidi rule
  ['a@مثال٣.com', 'xn--mgbh0fb7m.com'],
  ['a@نامه\u200cای.ir', 'xn--mgba3gch31f060k.ir'], // ZWNJ between joining letters (ContextJ)
  ['a@क्\u200dष.in', 'xn--11b2ezcw70k.in'], // ZWJ after a virama (ContextJ)
  ['a@l·l.cat', 'xn--ll-0ea.cat'], // Catalan middle dot between two l (ContextO)
  ['a@͵α.gr', 'xn--wva4j.gr'], // Greek keraia before a Greek letter
  ['a@א׳.com', 'xn--4db4e.com'], // Hebrew geresh after a Hebrew letter
  ['a@ロック・ミュージック.jp', 'xn--pcka0a5bc0orb8c6gm.jp'], // katakana middle dot among katakana
];

/** [input, reason] — rejected with exactly this reason. */
const invalid: [unknown, string][] = [
  [42, 'must be a string'],
  [null, 'must be a string'],
  [undefined, 'must be a string'],
  [{ email: 'a@b.com' }, 'must be a string'],
  ['', 'address is empty'],
  ['example.com', 'missing @'],
  ['@example.com', 'local part is empty'],
  ['user@', 'domain is empty'],
  ['a@b@c.com', "local part contains an invalid character '@'"],
  ['.user@example.com', 'local part starts with a dot'],
  ['user.@example.com', 'local part ends with a dot'],
  ['us..er@example.com', 'local part has two dots in a row'],
  ['"john.doe"@example.com', 'quoted local parts (like "john doe") are not supported'],
  ['"a@b"@example.com', 'quoted local parts (like "john doe") are not supported'],
  ['john doe@example.com', "local part contains an invalid character ' ' (space, U+0020)"],
  [' user@example.com', "local part contains an invalid character ' ' (space, U+0020)"],
  ['user@example.com ', "domain contains an invalid character ' ' (space, U+0020)"],
  ['a\u00a0b@example.com', 'local part contains an invalid character U+00A0'],
  // What invalid UTF-8 in a request body decodes to
  ['\ufffd\ufffd@example.com', "local part contains an invalid character '\ufffd'"],
  ['a@exa\ufffdmple.com', "domain contains an invalid character '\ufffd'"],
  ['a\tb@example.com', 'local part contains an invalid character U+0009'],
  ['a\u0000@example.com', 'local part contains an invalid character U+0000'],
  ['a\u200bb@example.com', 'local part contains an invalid character U+200B'],
  ['a\u202eb@example.com', 'local part contains an invalid character U+202E'],
  ['john(comment)@example.com', "local part contains an invalid character '('"],
  ['a,b@example.com', "local part contains an invalid character ','"],
  [`${local64}a@example.com`, 'local part is longer than 64 characters'],
  [`${'ü'.repeat(33)}@example.com`, 'local part is longer than 64 octets in UTF-8'],
  ['a@localhost', 'domain must contain at least one dot'],
  ['a@123.123.123.123', 'domain is an IP address; only domain names are accepted'],
  ['a@::1', 'domain is an IP address; only domain names are accepted'],
  ['a@fe80::1', 'domain is an IP address; only domain names are accepted'],
  ['a@[1.2.3.4]', 'IP address literals like [192.0.2.1] are not accepted as a domain'],
  ['a@[IPv6:::1]', 'IP address literals like [192.0.2.1] are not accepted as a domain'],
  ['a@0x7f.0.0.1', "top-level domain '1' is numeric"],
  ['a@example.123', "top-level domain '123' is numeric"],
  ['a@example.0x10', "top-level domain '0x10' is numeric"],
  ['a@.example.com', 'domain starts with a dot'],
  ['a@example.com.', 'domain ends with a dot'],
  ['a@example..com', "domain 'example..com' has an empty label (two dots in a row)"],
  ['a@-example.com', "domain label '-example' starts or ends with a hyphen"],
  ['a@example-.com', "domain label 'example-' starts or ends with a hyphen"],
  ['a@exa_mple.com', "domain contains an invalid character '_'"],
  ['a@ex%41mple.com', "domain contains an invalid character '%'"],
  ['a@exa\u200bmple.com', 'domain contains an invalid character U+200B'],
  ['a@exa\u00admple.com', 'domain contains an invalid character U+00AD'],
  // A-labels: valid punycode, some non-ASCII in it, and the canonical encoding (decode, re-encode, compare).
  ['a@xn--zz.com', "domain label 'xn--zz' is not valid punycode"],
  ['a@XN--ZZ.com', "domain label 'xn--zz' is not valid punycode"],
  ['a@ｘｎ--zz.com', "domain label 'xn--zz' is not valid punycode"],
  ['a@xn--.com', "domain label 'xn--' does not encode any non-ASCII character"],
  ['a@xn--ss-.de', "domain label 'xn--ss-' does not encode any non-ASCII character"],
  [
    'a@xn--bcher-2pa.example',
    "domain label 'xn--bcher-2pa' is not in canonical form (it decodes to 'bÜcher', whose A-label is 'xn--bcher-kva')",
  ],
  [
    'a@xn--bucher-xyd.example', // u + combining diaeresis: not NFC
    "domain label 'xn--bucher-xyd' is not in canonical form (it decodes to 'bu\u0308cher', whose A-label is 'xn--bcher-kva')",
  ],
  ['a@xn--a.com', "domain 'xn--a.com' is not a valid internationalized domain name"], // decodes to U+0080
  ['a@xn--a-ecp.ru', "domain 'xn--a-ecp.ru' is not a valid internationalized domain name"], // decodes to 'a⒈'
  ['a@xn---bcher-kva.de', "domain label '-bcêher' starts or ends with a hyphen"],
  // U-labels: code points UTS #46 disallows, a leading combining mark, STD3 after the mapping.
  ['a@⒈.com', "domain '⒈.com' is not a valid internationalized domain name"],
  ['a@\u0308a.com', "domain '\u0308a.com' is not a valid internationalized domain name"],
  ['a@exa＿mple.com', "domain label 'exa_mple' may hold only letters, digits and hyphens"],
  // Hyphens: IDNA's '--' in positions 3-4 is refused in a U-label (an LDH label may have it: valid cases below).
  ['a@üb--cd.com', "domain label 'üb--cd' has '--' in the third and fourth positions, which only A-labels (xn--) may have"],
  ['a@ü-.com', "domain label 'ü-' starts or ends with a hyphen"],
  ['a@-ü.com', "domain label '-ü' starts or ends with a hyphen"],
  // Bidi rule (RFC 5893), ContextJ and ContextO (RFC 5892).
  ['a@1א.com', "domain '1א.com' breaks the IDNA rule for right-to-left text (RFC 5893)"],
  ['a@אב.1com', "domain 'אב.1com' breaks the IDNA rule for right-to-left text (RFC 5893)"],
  ['a@אa.com', "domain 'אa.com' breaks the IDNA rule for right-to-left text (RFC 5893)"],
  ['a@a\u200db.com', 'domain has U+200D (zero-width joiner) where IDNA does not allow it (RFC 5892)'],
  ['a@a\u200cb.com', 'domain has U+200C (zero-width non-joiner) where IDNA does not allow it (RFC 5892)'],
  ['a@a·b.cat', "domain label 'a·b' has U+00B7 where IDNA2008 does not allow it (RFC 5892)"],
  ['a@͵a.gr', "domain label '͵a' has U+0375 where IDNA2008 does not allow it (RFC 5892)"],
  ['a@a׳.com', "domain label 'a׳' has U+05F3 where IDNA2008 does not allow it (RFC 5892)"],
  ['a@a・b.jp', "domain label 'a・b' has U+30FB where IDNA2008 does not allow it (RFC 5892)"],
  ['a@٣۳.com', "domain label '٣۳' has U+0663 where IDNA2008 does not allow it (RFC 5892)"],
  // The mapping can make dots: checked again after it.
  ['a@example.com。', 'domain ends with a dot'],
  ['a@example。。com', "domain 'example..com' has an empty label (two dots in a row)"],
  ['a@\ufe0f.com', 'domain starts with a dot'],
  ['a@a\u0000b.com', 'domain contains an invalid character U+0000'],
  [`a@${label63}l.com`, "domain label 'llllllllllllllllllll…' is longer than 63 characters"],
  [`a@${`${'x'.repeat(60)}.`.repeat(5)}com`, 'domain is longer than 253 characters'],
  // Lengths count the A-label form, which can be far longer than what was typed.
  [`a@${uLabel59}.com`, "domain label 'xn--aaaaaaaaaaaaaaaa…' is longer than 63 characters"],
  [`a@${`${ideographs20}.`.repeat(6)}com`, 'domain is longer than 253 characters'],
  [`${local64}@${domain189}x`, 'address is longer than 254 characters'],
  // Refused on their length before any conversion (an IDNA conversion of this domain once took 0.2 to 0.6 s).
  [`a@${'ü'.repeat(125_000)}.com`, 'domain is longer than 253 characters'],
  [`a@${'x'.repeat(125_000)}.com`, 'domain is longer than 253 characters'],
  [`${'a'.repeat(125_000)}!@example.com`, 'local part is longer than 64 characters'],
];

// checkSyntax is synchronous once tr46 is loaded (only internationalized domains need it).
beforeAll(() => loadValidator());

describe('checkSyntax', () => {
  it('has a big enough table', () => {
    expect(valid.length + invalid.length).toBeGreaterThanOrEqual(40);
  });

  it.each(valid)('accepts %s', (address, asciiDomain) => {
    const check = checkSyntax(address);
    expect(check).toEqual({
      ok: true,
      local: address.slice(0, address.lastIndexOf('@')),
      domain: address.slice(address.lastIndexOf('@') + 1),
      asciiDomain,
    });
  });

  it.each(invalid)('rejects %j', (input, reason) => {
    expect(checkSyntax(input)).toEqual({ ok: false, reason });
  });

  it('measures the local part in UTF-8 octets (RFC 6531)', () => {
    expect(checkSyntax(`${'ü'.repeat(32)}@example.com`).ok).toBe(true); // 64 octets
  });

  it('never trims', () => {
    expect(checkSyntax('user@example.com\n').ok).toBe(false);
    expect(checkSyntax('\tuser@example.com').ok).toBe(false);
  });
});
