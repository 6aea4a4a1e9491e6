import dgram from 'node:dgram';
import net from 'node:net';
import dnsPacket, { type Answer, type Packet } from 'dns-packet';

/**
 * A programmable DNS server on loopback (UDP and TCP on the same port) so the
 * validator's real `dns.promises.Resolver` can be tested without the internet.
 *
 * Names not in the zone table answer NXDOMAIN. A name in the table without
 * records of the asked type answers NOERROR with no answers (NODATA), which
 * is what a resolver sees for "this domain has no MX".
 */
export interface NameBehaviour {
  mx?: { priority: number; exchange: string }[];
  /** Publish `MX 0 .` (RFC 7505: this domain accepts no mail). */
  nullMx?: boolean;
  a?: string[];
  aaaa?: string[];
  nxdomain?: boolean;
  /** true: every query answers SERVFAIL; a number K: the first K queries of each type do. */
  servfail?: boolean | number;
  /** Limit `servfail` to these query types (e.g. ['A', 'AAAA']: MX answers, addresses fail). */
  servfailTypes?: string[];
  refused?: boolean;
  /** Wait this long before answering (to outlast the client's timeout). */
  delayMs?: number;
  /** Answer with a malformed packet (a header promising 5 answers, then 3 stray bytes), as a hostile server may. */
  malformed?: boolean;
}

export type Zones = Record<string, NameBehaviour>;

export interface QueryLog {
  name: string;
  type: string;
  transport: 'udp' | 'tcp';
}

export interface DnsServer {
  /** `127.0.0.1:PORT`, the form DNS_SERVERS takes. */
  address: string;
  port: number;
  queries(): QueryLog[];
  /** How many queries asked for this name (and type, when given). */
  count(name: string, type?: string): number;
  resetQueries(): void;
  /** Replace or add the behaviour of one name while running. */
  setZone(name: string, behaviour: NameBehaviour): void;
  stop(): Promise<void>;
}

const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const;
const TTL = 60;

/** A programmable DNS server (tests, and the local demo zones of `npm run dns:demo`). */
export async function startDnsServer(zones: Zones, options: { port?: number } = {}): Promise<DnsServer> {
  const table = new Map(Object.entries(zones).map(([name, b]) => [normalize(name), b]));
  const log: QueryLog[] = [];
  const failuresServed = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();

  function answer(query: Packet, transport: QueryLog['transport']): Buffer {
    const question = query.questions?.[0];
    const name = normalize(question?.name ?? '');
    const type = question?.type ?? 'A';
    log.push({ name, type, transport });

    const behaviour = table.get(name);
    if (behaviour?.malformed) {
      const header = Buffer.alloc(12);
      header.writeUInt16BE(query.id ?? 0, 0);
      header.writeUInt16BE(0x8180, 2); // a response, recursion desired and available, NOERROR
      header.writeUInt16BE(5, 6); // five answers, none of which follows
      return Buffer.concat([header, Buffer.from([0xde, 0xad, 0xbe])]);
    }
    let rcode: number = RCODE.NOERROR;
    let answers: Answer[] = [];
    if (!question || !behaviour || behaviour.nxdomain) {
      rcode = RCODE.NXDOMAIN;
    } else if (behaviour.refused) {
      rcode = RCODE.REFUSED;
    } else if (shouldServfail(behaviour, type, `${name}/${type}`)) {
      rcode = RCODE.SERVFAIL;
    } else {
      answers = recordsFor(question.name, type, behaviour);
    }
    return dnsPacket.encode({
      type: 'response',
      id: query.id,
      flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | rcode,
      questions: query.questions,
      answers,
    });
  }

  function shouldServfail(behaviour: NameBehaviour, type: string, key: string): boolean {
    if (behaviour.servfailTypes && !behaviour.servfailTypes.includes(type)) return false;
    if (behaviour.servfail === true) return true;
    if (typeof behaviour.servfail !== 'number') return false;
    const served = failuresServed.get(key) ?? 0;
    if (served >= behaviour.servfail) return false;
    failuresServed.set(key, served + 1);
    return true;
  }

  function later(delayMs: number | undefined, send: () => void) {
    if (!delayMs) return send();
    const timer = setTimeout(() => {
      timers.delete(timer);
      send();
    }, delayMs);
    timers.add(timer);
  }

  const behaviourOf = (query: Packet) => table.get(normalize(query.questions?.[0]?.name ?? ''));

  const udp = dgram.createSocket('udp4');
  udp.on('message', (message, peer) => {
    let query: Packet;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return; // garbage: a real server would drop it too
    }
    const response = answer(query, 'udp');
    later(behaviourOf(query)?.delayMs, () => udp.send(response, peer.port, peer.address, () => {}));
  });
  await new Promise<void>((resolve, reject) => {
    udp.once('error', reject);
    udp.bind(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = udp.address().port;

  // TCP on the same port: resolvers retry over TCP when a UDP answer is truncated.
  const sockets = new Set<net.Socket>();
  const tcp = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2) {
        const length = buffered.readUInt16BE(0);
        if (buffered.length < 2 + length) break;
        const message = buffered.subarray(2, 2 + length);
        buffered = buffered.subarray(2 + length);
        let query: Packet;
        try {
          query = dnsPacket.decode(message);
        } catch {
          socket.destroy();
          return;
        }
        const response = answer(query, 'tcp');
        const framed = Buffer.alloc(2 + response.length);
        framed.writeUInt16BE(response.length, 0);
        response.copy(framed, 2);
        later(behaviourOf(query)?.delayMs, () => {
          if (!socket.destroyed) socket.write(framed);
        });
      }
    });
  });
  // The UDP port is free on TCP in practice; if not, the server simply runs UDP only.
  await new Promise<void>((resolve) => {
    tcp.once('error', () => resolve());
    tcp.listen(port, '127.0.0.1', () => resolve());
  });

  return {
    address: `127.0.0.1:${port}`,
    port,
    queries: () => [...log],
    count: (name, type) => log.filter((q) => q.name === normalize(name) && (type === undefined || q.type === type)).length,
    resetQueries: () => {
      log.length = 0;
      failuresServed.clear();
    },
    setZone: (name, behaviour) => {
      table.set(normalize(name), behaviour);
      for (const key of [...failuresServed.keys()]) if (key.startsWith(`${normalize(name)}/`)) failuresServed.delete(key);
    },
    stop: async () => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const socket of sockets) socket.destroy();
      await Promise.all([
        new Promise<void>((resolve) => udp.close(() => resolve())),
        new Promise<void>((resolve) => (tcp.listening ? tcp.close(() => resolve()) : resolve())),
      ]);
    },
  };
}

function normalize(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}

function recordsFor(name: string, type: string, behaviour: NameBehaviour): Answer[] {
  const base = { name, ttl: TTL, class: 'IN' as const };
  switch (type) {
    case 'MX':
      if (behaviour.nullMx) return [{ ...base, type: 'MX', data: { preference: 0, exchange: '.' } }];
      return (behaviour.mx ?? []).map((mx) => ({
        ...base,
        type: 'MX' as const,
        data: { preference: mx.priority, exchange: mx.exchange },
      }));
    case 'A':
      return (behaviour.a ?? []).map((ip) => ({ ...base, type: 'A' as const, data: ip }));
    case 'AAAA':
      return (behaviour.aaaa ?? []).map((ip) => ({ ...base, type: 'AAAA' as const, data: ip }));
    default:
      return [];
  }
}
