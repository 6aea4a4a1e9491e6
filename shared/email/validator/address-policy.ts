import net from 'node:net';

/**
 * Which IP addresses an MX host may resolve to and still count as reachable
 * (SSRF guard). Anyone can publish an MX record pointing at 127.0.0.1, a
 * private network or the cloud metadata address 169.254.169.254; the probe
 * must never connect there, and DNS-level connectability must not call such a
 * host reachable either.
 *
 * - `public`: globally routable unicast; always allowed.
 * - `private`: private-use, loopback, CGNAT, benchmarking, unique-local IPv6.
 *   Allowed only with ALLOW_PRIVATE_MX=true, which local runs and tests set
 *   to reach servers on loopback (a deployed stack refuses the setting).
 * - `forbidden`: never a real mail host: unspecified, multicast, broadcast,
 *   reserved, documentation and protocol-assignment ranges, and link-local
 *   with the cloud metadata endpoints (169.254.169.254, fd00:ec2::254) in it.
 *   Never allowed, not even locally (0.0.0.0 would even reach this machine,
 *   and the metadata endpoint hands out the function's credentials).
 *
 * IPv6 forms that carry an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`, NAT64
 * `64:ff9b::/96`, 6to4 `2002::/16`) are judged by that IPv4 address. Ranges
 * follow the IANA special-purpose address registries.
 */
export type AddressClass = 'public' | 'private' | 'forbidden';

/** Networks as written in the registries: [address, prefix length]. */
interface Ranges {
  ipv4: readonly (readonly [string, number])[];
  ipv6: readonly (readonly [string, number])[];
}

/** The ranges of each class (exported so a test can hold the matching to net.BlockList's). */
export const RANGES = {
  private: {
    ipv4: [
      ['10.0.0.0', 8],
      ['172.16.0.0', 12],
      ['192.168.0.0', 16],
      ['127.0.0.0', 8], // loopback
      ['100.64.0.0', 10], // carrier-grade NAT
      ['198.18.0.0', 15], // benchmarking; also used by fake-IP DNS proxies
    ],
    ipv6: [
      ['::1', 128], // loopback
      ['fc00::', 7], // unique local (but see metadataAndLinkLocal: fd00:ec2::254 is never allowed)
      ['fec0::', 10], // deprecated site-local
    ],
  },
  /** Checked before `private`: these sit inside ranges that are otherwise only private. */
  metadataAndLinkLocal: {
    ipv4: [['169.254.0.0', 16]], // link-local, incl. the EC2/Lambda metadata and credentials endpoint 169.254.169.254
    ipv6: [
      ['fe80::', 10], // link-local
      ['fd00:ec2::254', 128], // the EC2 metadata endpoint over IPv6
    ],
  },
  forbidden: {
    ipv4: [
      ['0.0.0.0', 8], // "this network", incl. the unspecified address
      ['192.0.0.0', 24], // IETF protocol assignments
      ['192.0.2.0', 24], // documentation (TEST-NET-1)
      ['192.88.99.0', 24], // deprecated 6to4 relay anycast
      ['198.51.100.0', 24], // documentation (TEST-NET-2)
      ['203.0.113.0', 24], // documentation (TEST-NET-3)
      ['224.0.0.0', 4], // multicast
      ['240.0.0.0', 4], // reserved, incl. broadcast 255.255.255.255
    ],
    ipv6: [
      ['::', 96], // unspecified and deprecated IPv4-compatible
      ['64:ff9b:1::', 48], // local-use NAT64
      ['100::', 64], // discard-only
      ['2001::', 23], // IETF protocol assignments (Teredo, ORCHID, benchmarking, ...)
      ['2001:db8::', 32], // documentation
      ['3fff::', 20], // documentation
      ['5f00::', 16], // SRv6 SIDs
      ['ff00::', 8], // multicast
    ],
  },
  /** Everything routable on the IPv6 internet today is inside 2000::/3. */
  globalUnicast: { ipv4: [], ipv6: [['2000::', 3]] },
} as const satisfies Record<string, Ranges>;

/** A network as its address bytes (4 for IPv4, 16 for IPv6) and prefix length. */
type Network = readonly [bytes: Uint8Array, prefix: number];

function rangeBytes(address: string): Uint8Array {
  const family = net.isIP(address);
  const bytes = family === 4 ? ipv4Bytes(address) : family === 6 ? ipv6Bytes(address) : undefined;
  if (!bytes) throw new Error(`address-policy: malformed range address ${address}`);
  return bytes;
}

const toNetworks = ({ ipv4, ipv6 }: Ranges) => ({
  ipv4: ipv4.map(([address, prefix]): Network => [rangeBytes(address), prefix]),
  ipv6: ipv6.map(([address, prefix]): Network => [rangeBytes(address), prefix]),
});

// Matched in plain JS on the parsed bytes rather than with net.BlockList,
// whose construction at init (a SocketAddress per range) showed in the
// validating functions' cold start; parsed at the first classification.
let networks: Record<keyof typeof RANGES, ReturnType<typeof toNetworks>> | undefined;
const parsedNetworks = () =>
  (networks ??= {
    private: toNetworks(RANGES.private),
    metadataAndLinkLocal: toNetworks(RANGES.metadataAndLinkLocal),
    forbidden: toNetworks(RANGES.forbidden),
    globalUnicast: toNetworks(RANGES.globalUnicast),
  });

/** Whether the address's first `prefix` bits are the network's. */
function inNetwork(address: Uint8Array, [network, prefix]: Network): boolean {
  const whole = prefix >> 3;
  for (let i = 0; i < whole; i++) if (address[i] !== network[i]) return false;
  const bits = prefix & 7;
  if (bits === 0) return true;
  const mask = (0xff << (8 - bits)) & 0xff;
  return (address[whole]! & mask) === (network[whole]! & mask);
}

const inAny = (address: Uint8Array, networks: readonly Network[]) => networks.some((network) => inNetwork(address, network));

export function classifyAddress(ip: string): AddressClass {
  const family = net.isIP(ip);
  if (family === 4) return classifyIpv4(ipv4Bytes(ip));
  if (family !== 6) return 'forbidden';
  const bytes = ipv6Bytes(ip);
  if (!bytes) return 'forbidden';
  const embedded = embeddedIpv4(bytes);
  if (embedded) return classifyIpv4(embedded);
  const { metadataAndLinkLocal, private: privateUse, forbidden, globalUnicast } = parsedNetworks();
  if (inAny(bytes, metadataAndLinkLocal.ipv6)) return 'forbidden';
  if (inAny(bytes, privateUse.ipv6)) return 'private';
  if (inAny(bytes, forbidden.ipv6) || !inAny(bytes, globalUnicast.ipv6)) return 'forbidden';
  return 'public';
}

/** Whether a mail host at this address may be counted as connectable and probed. */
export function isAllowedTarget(ip: string, allowPrivate: boolean): boolean {
  const kind = classifyAddress(ip);
  return kind === 'public' || (allowPrivate && kind === 'private');
}

function classifyIpv4(bytes: Uint8Array): AddressClass {
  const { metadataAndLinkLocal, private: privateUse, forbidden } = parsedNetworks();
  if (inAny(bytes, metadataAndLinkLocal.ipv4)) return 'forbidden';
  if (inAny(bytes, privateUse.ipv4)) return 'private';
  if (inAny(bytes, forbidden.ipv4)) return 'forbidden';
  return 'public';
}

/** The 4 bytes of a dotted-quad IPv4 address (one net.isIP has accepted: no leading zeros, each part ≤ 255). */
function ipv4Bytes(ip: string): Uint8Array {
  return Uint8Array.from(ip.split('.'), Number);
}

/** The IPv4 address an IPv6 address stands for, when it is a mapped, NAT64 or 6to4 form. */
function embeddedIpv4(bytes: Uint8Array): Uint8Array | undefined {
  const zeros = (from: number, to: number) => bytes.subarray(from, to).every((b) => b === 0);
  const quad = (at: number) => bytes.subarray(at, at + 4);
  // ::ffff:0:0/96, IPv4-mapped
  if (zeros(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return quad(12);
  // 64:ff9b::/96, well-known NAT64 prefix
  if (bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zeros(4, 12)) return quad(12);
  // 2002::/16, 6to4: the IPv4 address follows the prefix
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return quad(2);
  return undefined;
}

/** The 16 bytes of an IPv6 address (with `::` and an optional dotted-quad tail), or undefined. */
export function ipv6Bytes(ip: string): Uint8Array | undefined {
  if (!net.isIPv6(ip) || ip.includes('%')) return undefined;
  let text = ip;
  const tail: number[] = [];
  const lastColon = text.lastIndexOf(':');
  const last = text.slice(lastColon + 1);
  if (last.includes('.')) {
    tail.push(...last.split('.').map(Number));
    text = `${text.slice(0, lastColon + 1)}0:0`; // placeholder groups, replaced below
  }
  const [head = '', rest] = text.split('::') as [string, string | undefined];
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const front = groups(head);
  const back = rest === undefined ? [] : groups(rest);
  const missing = 8 - front.length - back.length;
  const all = rest === undefined ? front : [...front, ...Array<number>(missing).fill(0), ...back];
  if (all.length !== 8) return undefined;
  const bytes = new Uint8Array(16);
  all.forEach((group, i) => {
    bytes[i * 2] = group >> 8;
    bytes[i * 2 + 1] = group & 0xff;
  });
  if (tail.length === 4) bytes.set(tail, 12);
  return bytes;
}
