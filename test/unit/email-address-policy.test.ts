import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { classifyAddress, isAllowedTarget } from '#shared/email/validator/index';
import { ipv6Bytes, RANGES, type AddressClass } from '#shared/email/validator/address-policy';

/** A seeded generator (32-bit LCG, high bits): a failing corpus can be reproduced. */
function generator(seed: number): (n: number) => number {
  let state = seed >>> 0;
  return (n) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return (state >>> 8) % n;
  };
}

/** Dotted-quad text of 4 bytes; uncompressed IPv6 text of 16. */
const v4Text = (bytes: ArrayLike<number>) => Array.from(bytes).join('.');
const v6Text = (bytes: ArrayLike<number>) =>
  Array.from({ length: 8 }, (_, i) => ((bytes[i * 2]! << 8) | bytes[i * 2 + 1]!).toString(16)).join(':');

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

describe('classifyAddress matches as net.BlockList does', () => {
  // The reference: the same ranges in Node's BlockList, as the guard was first written.
  const blockList = (ranges: (typeof RANGES)[keyof typeof RANGES]) => {
    const list = new net.BlockList();
    for (const [address, prefix] of ranges.ipv4) list.addSubnet(address, prefix, 'ipv4');
    for (const [address, prefix] of ranges.ipv6) list.addSubnet(address, prefix, 'ipv6');
    return list;
  };
  const [privateList, metadata, forbidden, globalUnicast] = [
    RANGES.private,
    RANGES.metadataAndLinkLocal,
    RANGES.forbidden,
    RANGES.globalUnicast,
  ].map(blockList) as [net.BlockList, net.BlockList, net.BlockList, net.BlockList];
  const referenceV4 = (ip: string): AddressClass =>
    metadata.check(ip, 'ipv4')
      ? 'forbidden'
      : privateList.check(ip, 'ipv4')
        ? 'private'
        : forbidden.check(ip, 'ipv4')
          ? 'forbidden'
          : 'public';
  const reference = (ip: string): AddressClass => {
    if (net.isIPv4(ip)) return referenceV4(ip);
    const b = ipv6Bytes(ip)!;
    const zeros = (from: number, to: number) => b.subarray(from, to).every((x) => x === 0);
    if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return referenceV4(v4Text(b.subarray(12)));
    if (b[0] === 0 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(4, 12)) return referenceV4(v4Text(b.subarray(12)));
    if (b[0] === 0x20 && b[1] === 0x02) return referenceV4(v4Text(b.subarray(2, 6)));
    if (metadata.check(ip, 'ipv6')) return 'forbidden';
    if (privateList.check(ip, 'ipv6')) return 'private';
    return forbidden.check(ip, 'ipv6') || !globalUnicast.check(ip, 'ipv6') ? 'forbidden' : 'public';
  };

  /** The first and last address of a network, and the ones just outside it. */
  const edges = (network: Uint8Array, prefix: number): Uint8Array[] => {
    const first = network.map((byte, i) => byte & (0xff << Math.max(0, 8 - Math.max(0, prefix - i * 8))) & 0xff);
    const last = network.map((byte, i) => byte | (0xff >> Math.min(8, Math.max(0, prefix - i * 8))));
    const step = (bytes: Uint8Array, by: 1 | -1) => {
      const next = bytes.slice();
      for (let i = next.length - 1; i >= 0; i--) {
        next[i] = (next[i]! + by) & 0xff;
        if (next[i] !== (by === 1 ? 0 : 0xff)) break;
      }
      return next;
    };
    return [first, last, step(first, -1), step(last, 1)];
  };
  const v4 = (text: string) => Uint8Array.from(text.split('.'), Number);
  const random = generator(7);
  const randomBytes = (n: number) => Uint8Array.from({ length: n }, () => random(256));

  it('on every range edge and on 6,000 random IPv4, IPv6 and IPv4-carrying IPv6 addresses', () => {
    // Given the edges of every range and random addresses of each form
    const ipv4 = Object.values(RANGES).flatMap((r) => r.ipv4.flatMap(([a, p]) => edges(v4(a), p)));
    const ipv6 = Object.values(RANGES).flatMap((r) => r.ipv6.flatMap(([a, p]) => edges(ipv6Bytes(a)!, p)));
    for (let i = 0; i < 2000; i++) ipv4.push(randomBytes(4));
    for (let i = 0; i < 2000; i++) ipv6.push(randomBytes(16));
    const carried = ipv4.flatMap((b) => [`::ffff:${v4Text(b)}`, `64:ff9b::${v4Text(b)}`, v6Text([0x20, 0x02, ...b, ...randomBytes(10)])]);
    const addresses = [...ipv4.map(v4Text), ...ipv6.map(v6Text), ...carried];
    expect(new Set(addresses).size).toBeGreaterThan(6000);

    // When each is classified, Then the class is the reference's
    const differing = addresses.filter((ip) => classifyAddress(ip) !== reference(ip));
    expect(differing).toEqual([]);
    // And its random part alone reaches every class, in both families
    const randomPart = [...ipv4.slice(-2000).map(v4Text), ...ipv6.slice(-2000).map(v6Text)];
    for (const family of [4, 6]) {
      const classes = randomPart.filter((ip) => net.isIP(ip) === family).map(classifyAddress);
      expect(new Set(classes)).toEqual(new Set(['public', 'private', 'forbidden']));
    }
  });
});

describe('ipv6Bytes reads IPv6 text as Node does', () => {
  const random = generator(11);
  const pick = <T>(items: readonly T[]) => items[random(items.length)]!;

  const quad = () => Array.from({ length: 4 }, () => random(256)).join('.');
  /** An IPv4 address carried in IPv6: mapped, NAT64, 6to4. */
  const carrying = () =>
    pick([
      `::ffff:${quad()}`,
      `::FFFF:${quad()}`,
      `64:ff9b::${quad()}`,
      `2002:${random(0x10000).toString(16)}:${random(0x10000).toString(16)}::1`,
    ]);

  /** An IPv6 address in one of its text forms: case, leading zeros, a compressed run of zeros, a dotted tail. */
  const written = (): string => {
    if (random(10) === 0) return carrying();
    const groups = Array.from({ length: 8 }, () => (random(3) === 0 ? 0 : random(0x10000)));
    const from = random(8);
    groups.fill(0, from, from + random(9 - from));
    const hex = groups.map((g) => {
      const text = g.toString(16).padStart(random(2) === 0 ? 1 : 4, '0');
      return random(2) === 0 ? text.toUpperCase() : text;
    });
    const tail = random(4) === 0 ? [`${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`] : undefined;
    const parts = tail ? [...hex.slice(0, 6), ...tail] : hex;
    const zeroRuns = [...parts.keys()].filter((i) => parts[i] !== undefined && /^0+$/.test(parts[i]!));
    if (zeroRuns.length === 0 || random(3) === 0) return parts.join(':');
    const start = pick(zeroRuns);
    let end = start;
    while (end + 1 < parts.length && /^0+$/.test(parts[end + 1]!) && random(4) !== 0) end++;
    return `${parts.slice(0, start).join(':')}::${parts.slice(end + 1).join(':')}`;
  };

  /** The text with one to three characters inserted, removed or replaced. */
  const mutated = (text: string): string => {
    let out = text;
    for (let edits = 1 + random(3); edits > 0; edits--) {
      const at = random(out.length + 1);
      const char = pick([...':.%0123456789abcdefgABCDEFz ']);
      const edit = random(3);
      out = edit === 0 ? out.slice(0, at) + char + out.slice(at) : out.slice(0, at) + (edit === 1 ? '' : char) + out.slice(at + 1);
    }
    return out;
  };

  const canonical = (text: string) => new URL(`http://[${text}]`).hostname;

  it('takes the texts net.isIPv6 takes (zone ids refused), with the bytes the URL parser reads, on 30,000 texts', () => {
    // Given written IPv6 addresses, of every form, and mutations of them
    const valid = Array.from({ length: 10_000 }, written);
    expect(new Set(valid).size).toBeGreaterThan(9_000);
    const share = (pattern: RegExp) => valid.filter((t) => pattern.test(t)).length / valid.length;
    expect(share(/\./)).toBeGreaterThan(0.15); // dotted tails
    expect(share(/::/)).toBeGreaterThan(0.3);
    expect(share(/[a-f]/)).toBeGreaterThan(0.3);
    expect(share(/[A-F]/)).toBeGreaterThan(0.3);
    expect(share(/^::ffff:/i)).toBeGreaterThan(0.02);
    expect(share(/^64:ff9b::/)).toBeGreaterThan(0.02);
    expect(share(/^2002:/)).toBeGreaterThan(0.02);
    const texts = [
      ...valid,
      ...valid.flatMap((t) => [mutated(t), mutated(t)]),
      '',
      ':',
      '::',
      ':::',
      '1::2::3',
      'fe80::1%eth0',
      '::ffff:1.2.3.04',
    ];

    // When each is parsed
    const disagreeing = texts.filter((t) => (ipv6Bytes(t) !== undefined) !== (net.isIPv6(t) && !t.includes('%')));
    const misread = texts.filter((t) => {
      const bytes = ipv6Bytes(t);
      return bytes !== undefined && canonical(v6Text(bytes)) !== canonical(t);
    });

    // Then it is an address exactly when Node says so, and the same address
    expect(disagreeing).toEqual([]);
    expect(misread).toEqual([]);
    expect(valid.every((t) => net.isIPv6(t))).toBe(true);
    expect(texts.filter((t) => ipv6Bytes(t) === undefined).length).toBeGreaterThan(5_000);
  });
});
