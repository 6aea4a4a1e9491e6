import { describe, expect, it } from 'vitest';
import { classifyAddress, isAllowedTarget } from '#shared/email/validator/index';
import { ipv6Bytes } from '#shared/email/validator/address-policy';

describe('classifyAddress (SSRF guard for MX targets)', () => {
  it.each([
    // public
    ['8.8.8.8', 'public'],
    ['142.250.102.27', 'public'],
    ['172.15.255.255', 'public'],
    ['172.32.0.1', 'public'],
    ['100.63.255.255', 'public'],
    ['100.128.0.1', 'public'],
    ['2a00:1450:4001:c02::1b', 'public'],
    ['2606:4700::1111', 'public'],
    ['::ffff:8.8.8.8', 'public'],
    ['64:ff9b::808:808', 'public'], // NAT64 of 8.8.8.8
    // private: allowed only with ALLOW_PRIVATE_MX=true
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.254', 'private'],
    ['192.168.1.1', 'private'],
    ['127.0.0.1', 'private'],
    ['127.8.9.10', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.255', 'private'],
    ['198.18.0.1', 'private'],
    ['::1', 'private'],
    ['fd00::1', 'private'],
    ['fc12:3456::1', 'private'],
    ['::ffff:127.0.0.1', 'private'], // IPv4-mapped loopback
    ['::ffff:7f00:1', 'private'],
    ['2002:c0a8:0101::1', 'private'], // 6to4 of 192.168.1.1
    // forbidden: never a mail host
    ['0.0.0.0', 'forbidden'],
    ['0.1.2.3', 'forbidden'],
    ['224.0.0.1', 'forbidden'],
    ['239.255.255.250', 'forbidden'],
    ['255.255.255.255', 'forbidden'],
    ['240.0.0.1', 'forbidden'],
    ['192.0.2.10', 'forbidden'],
    ['198.51.100.1', 'forbidden'],
    ['203.0.113.5', 'forbidden'],
    ['::', 'forbidden'],
    ['ff02::1', 'forbidden'],
    ['2001:db8::1', 'forbidden'],
    ['2001::1', 'forbidden'], // Teredo
    ['::ffff:0.0.0.0', 'forbidden'],
    ['4000::1', 'forbidden'], // outside global unicast
    // link-local and the metadata endpoints: never, not even with ALLOW_PRIVATE_MX
    ['169.254.169.254', 'forbidden'], // cloud metadata
    ['169.254.0.1', 'forbidden'],
    ['fe80::1', 'forbidden'],
    ['febf:ffff::1', 'forbidden'],
    ['fd00:ec2::254', 'forbidden'], // EC2 metadata over IPv6, inside unique-local fc00::/7
    ['::ffff:169.254.169.254', 'forbidden'],
    ['64:ff9b::a9fe:a9fe', 'forbidden'], // NAT64 of the metadata address
    ['2002:a9fe:a9fe::1', 'forbidden'], // 6to4 of the metadata address
    ['not-an-ip', 'forbidden'],
  ])('%s is %s', (ip, kind) => {
    expect(classifyAddress(ip)).toBe(kind);
  });

  it('allows private targets only when configured, never forbidden ones', () => {
    expect(isAllowedTarget('127.0.0.1', false)).toBe(false);
    expect(isAllowedTarget('127.0.0.1', true)).toBe(true);
    expect(isAllowedTarget('169.254.169.254', false)).toBe(false);
    expect(isAllowedTarget('169.254.169.254', true)).toBe(false);
    expect(isAllowedTarget('fd00:ec2::254', true)).toBe(false);
    expect(isAllowedTarget('fd00:ec2::253', true)).toBe(true); // the rest of unique-local stays private
    expect(isAllowedTarget('fe80::1', true)).toBe(false);
    expect(isAllowedTarget('8.8.8.8', false)).toBe(true);
    expect(isAllowedTarget('0.0.0.0', true)).toBe(false);
    expect(isAllowedTarget('224.0.0.1', true)).toBe(false);
  });

  it('parses IPv6 text forms', () => {
    expect(Array.from(ipv6Bytes('::')!)).toEqual(Array(16).fill(0));
    expect(Array.from(ipv6Bytes('::1')!).at(-1)).toBe(1);
    expect(Array.from(ipv6Bytes('1::')!).slice(0, 2)).toEqual([0, 1]);
    expect(Array.from(ipv6Bytes('::ffff:1.2.3.4')!).slice(10)).toEqual([0xff, 0xff, 1, 2, 3, 4]);
    expect(Array.from(ipv6Bytes('2001:db8:0:0:1:0:0:1')!)).toEqual([0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1]);
    expect(ipv6Bytes('1.2.3.4')).toBeUndefined();
  });
});
