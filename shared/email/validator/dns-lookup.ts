import { Resolver } from 'node:dns/promises';
import type { ValidatorConfig } from './config.ts';

/**
 * DNS answers the validator needs, asked through `dns.promises.Resolver` so
 * DNS_SERVERS can point at a test server on loopback. c-ares makes exactly
 * one attempt per query (`tries: 1`); retries of transient failures happen
 * here, where they can be counted, backed off and told apart from real answers:
 *
 * - NXDOMAIN (ENOTFOUND) and NODATA (ENODATA) are answers, not failures.
 * - SERVFAIL, timeouts, REFUSED and connection errors are transient: retried
 *   up to DNS_TRIES attempts with a small backoff, then a DnsFailure.
 * - A malformed answer (EBADRESP) too: c-ares then drops the connection its
 *   queries share, and every other query in flight to that server fails
 *   with it, healthy domains included. Such a query is asked again on a
 *   resolver of its own, so that the hostile answer, asked again too, takes
 *   down only its own query.
 * - Anything else (FORMERR, NOTIMP) will not improve on retry: a DnsFailure
 *   at once.
 */
export class DnsFailure extends Error {
  override name = 'DnsFailure';
  constructor(
    readonly query: string,
    readonly code: string,
    readonly attempts: number,
  ) {
    super(`DNS lookup of ${query} failed: ${describeCode(code)}${attempts > 1 ? ` after ${attempts} attempts` : ''}`);
  }
}

export interface MxRecord {
  exchange: string;
  priority: number;
}

export type MxAnswer =
  | { kind: 'mx'; records: MxRecord[] }
  /** The domain exists but publishes no MX: mail falls back to its A/AAAA (RFC 5321 §5.1). */
  | { kind: 'no-mx' }
  /** The domain does not exist. */
  | { kind: 'nxdomain' };

export interface HostAddresses {
  /** IPv4 first: the probe tries them in this order, and IPv6 egress is often missing. */
  addresses: string[];
  /** Set when A or AAAA could not be answered (after retries): the list may be incomplete. */
  failure: DnsFailure | undefined;
}

const TRANSIENT = new Set([
  'ESERVFAIL',
  'ETIMEOUT',
  'ETIMEDOUT',
  'EREFUSED',
  'ECONNREFUSED',
  'ECONNRESET',
  'EOF',
  'ECANCELLED',
  'EDESTRUCTION',
  'ENOMEM',
  'EBADRESP',
]);
const BACKOFF_BASE_MS = 50;
const BACKOFF_MAX_MS = 400;

export class DnsClient {
  private readonly resolver: Resolver;

  constructor(private readonly config: Pick<ValidatorConfig, 'dnsServers' | 'dnsTimeoutMs' | 'dnsTries'>) {
    this.resolver = this.newResolver();
  }

  private newResolver(): Resolver {
    const resolver = new Resolver({ timeout: this.config.dnsTimeoutMs, tries: 1 });
    if (this.config.dnsServers) resolver.setServers(this.config.dnsServers);
    return resolver;
  }

  async mx(domain: string): Promise<MxAnswer> {
    try {
      const records = await this.withRetries(`MX ${domain}`, (r) => r.resolveMx(domain));
      if (records.length === 0) return { kind: 'no-mx' };
      return {
        kind: 'mx',
        records: records.map((r) => ({ exchange: normalizeHost(r.exchange), priority: r.priority })),
      };
    } catch (error) {
      if (codeOf(error) === 'ENOTFOUND') return { kind: 'nxdomain' };
      if (codeOf(error) === 'ENODATA') return { kind: 'no-mx' };
      throw error;
    }
  }

  /**
   * A and AAAA of a host, asked in parallel. Throws a DnsFailure only when
   * neither could be answered; a host whose name does not exist has no addresses.
   */
  async addresses(host: string): Promise<HostAddresses> {
    const [v4, v6] = await Promise.allSettled([
      this.records(`A ${host}`, (r) => r.resolve4(host)),
      this.records(`AAAA ${host}`, (r) => r.resolve6(host)),
    ]);
    if (v4.status === 'rejected' && v6.status === 'rejected') throw v4.reason;
    return {
      addresses: [...(v4.status === 'fulfilled' ? v4.value : []), ...(v6.status === 'fulfilled' ? v6.value : [])],
      failure: v4.status === 'rejected' ? v4.reason : v6.status === 'rejected' ? v6.reason : undefined,
    };
  }

  /** Address records, with "no such name" and "no such record" both meaning none. */
  private async records(query: string, ask: (resolver: Resolver) => Promise<string[]>): Promise<string[]> {
    try {
      return await this.withRetries(query, ask);
    } catch (error) {
      const code = codeOf(error);
      if (code === 'ENOTFOUND' || code === 'ENODATA') return [];
      throw error;
    }
  }

  private async withRetries<T>(query: string, ask: (resolver: Resolver) => Promise<T>): Promise<T> {
    let resolver = this.resolver;
    for (let attempt = 1; ; attempt++) {
      try {
        return await bounded(ask(resolver), this.config.dnsTimeoutMs);
      } catch (error) {
        const code = codeOf(error) ?? 'EUNKNOWN';
        if (code === 'EBADRESP' && resolver === this.resolver) resolver = this.newResolver();
        if (code === 'ENOTFOUND' || code === 'ENODATA') throw error; // an answer, handled by the caller
        if (!TRANSIENT.has(code)) throw new DnsFailure(query, code, attempt);
        if (attempt >= this.config.dnsTries) throw new DnsFailure(query, code, attempt);
        await sleep(Math.min(BACKOFF_BASE_MS * 2 ** (attempt - 1), BACKOFF_MAX_MS));
      }
    }
  }
}

/** MX exchanges come back as given in the zone; '' (or '.') is the null MX. */
function normalizeHost(host: string): string {
  return host.toLowerCase().replace(/\.$/, '');
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function describeCode(code: string): string {
  const names: Record<string, string> = {
    ESERVFAIL: 'SERVFAIL',
    ETIMEOUT: 'timed out',
    ETIMEDOUT: 'timed out',
    EREFUSED: 'REFUSED',
    ECONNREFUSED: 'could not reach the DNS server',
    EFORMERR: 'FORMERR',
    ENOTIMP: 'NOTIMP',
    EBADRESP: 'malformed answer',
  };
  return names[code] ?? code;
}

/**
 * c-ares enforces its timeout only roughly (a 150 ms timeout can take 300 ms),
 * so each attempt is also bounded here; the abandoned query settles unobserved.
 */
function bounded<T>(query: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('DNS query timed out'), { code: 'ETIMEOUT' })), timeoutMs);
  });
  query.catch(() => {});
  return Promise.race([query, timeout]).finally(() => clearTimeout(timer));
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
