import { describe, expect, it } from 'vitest';
import { maskEmail, redact, REDACTED } from '#shared/util/redact';

describe('log redaction', () => {
  const token = `tok_${'a'.repeat(43)}`;

  it('masks addresses to their first character and domain, wherever they appear', () => {
    expect(maskEmail('alice@example.com')).toBe('a***@example.com');
    expect(redact('message', 'could not validate Bob.Smith+x@mail.example.org today')).toBe(
      'could not validate B***@mail.example.org today',
    );
    expect(redact('emails', 'a@x.test, b@y.test')).toBe('a***@x.test, b***@y.test');
  });

  it('removes tokens by shape and by field name', () => {
    expect(redact('error_message', `token ${token} revoked`)).toBe(`token tok_${REDACTED} revoked`);
    expect(redact('header', 'Bearer abc.def-ghi')).toBe(`Bearer ${REDACTED}`);
    expect(redact('authorization', 'anything at all')).toBe(REDACTED);
    expect(redact('token', 'x')).toBe(REDACTED);
  });

  it('leaves other values alone', () => {
    expect(redact('request_id', 'f1c1a0e8-8b0e-4f43-9d3f-0c5d1d6f6b0a')).toBe('f1c1a0e8-8b0e-4f43-9d3f-0c5d1d6f6b0a');
    expect(redact('status', 200)).toBe(200);
    expect(redact('reason', 'DNS lookup of MX broken.test failed: SERVFAIL')).toBe('DNS lookup of MX broken.test failed: SERVFAIL');
  });
});
