import { describe, expect, it } from 'vitest';
import { checkSyntax } from '#shared/email/validator/index';

const local64 = 'a'.repeat(64);
const label63 = 'l'.repeat(63);
// 64 + 1 + 189 = 254 octets: the longest address allowed.
const domain189 = `${'d'.repeat(63)}.${'e'.repeat(63)}.${'f'.repeat(57)}.com`;

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
  ['a@xn--zz.com', "domain 'xn--zz.com' is not a valid internationalized domain name"],
  ['a@a\u0000b.com', 'domain contains an invalid character U+0000'],
  [`a@${label63}l.com`, "domain label 'llllllllllllllllllll…' is longer than 63 characters"],
  [`a@${`${'x'.repeat(60)}.`.repeat(5)}com`, 'domain is longer than 253 characters'],
  [`${local64}@${domain189}x`, 'address is longer than 254 characters'],
];

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
