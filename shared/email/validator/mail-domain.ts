import { countMetric } from '#shared/util/metrics';
import { isAllowedTarget } from './address-policy.ts';
import type { ValidatorConfig } from './config.ts';
import { DnsClient, DnsFailure, type HostAddresses, type MxAnswer, type MxRecord } from './dns-lookup.ts';
import type { MailHost } from './mailbox-probe.ts';
import { probeSmtpHost } from './smtp-probe.ts';
import { TtlCache } from './ttl-cache.ts';

/**
 * Whether a domain accepts mail and how many of its mail hosts are reachable:
 * the network half of a validation, shared by every address on the domain.
 *
 * Decisions (also in docs/email-validation.md):
 * - Null MX (RFC 7505, `MX 0 .`): the domain says it accepts no mail. Its
 *   record is still counted (`mx_record_count` 1), is never connectable, and
 *   the domain does not accept mail. A null MX mixed with real MX records is
 *   a misconfiguration; the real ones are used and the null one counts as an
 *   unreachable record.
 * - No MX but A/AAAA (implicit MX, RFC 5321 §5.1): accepts mail,
 *   `mx_record_count` 0. The domain host itself stands in for the mail host:
 *   it decides `can_connect`, but `connectable_mx_record_count` stays 0
 *   because there is no MX record to count.
 * - NXDOMAIN, or no MX and no A/AAAA: does not accept mail (a finished answer).
 * - A mail host whose own A/AAAA lookups keep failing counts as not
 *   connectable (mail senders cannot reach it either), and that answer is
 *   not cached, so the next validation asks again.
 * - Failures of the domain's own MX (or implicit A/AAAA) lookup throw a
 *   DnsFailure: whether the domain accepts mail is unknown, so the
 *   validation ends in `error` and is retried later.
 * - With the probe on, a domain is never a way to make this service connect
 *   widely: only its first MAX_PROBED_HOSTS distinct MX hosts (lowest
 *   preference first) are looked up and probed, each at no more than
 *   MAX_PROBED_ADDRESSES addresses; the records beyond count as not
 *   connectable.
 */
export interface DomainAssessment {
  acceptsMail: boolean;
  mxRecordCount: number;
  connectableMxRecordCount: number;
  canConnect: boolean;
  /** Some host lookups failed transiently: good for this answer, not for the cache. */
  incomplete: boolean;
  /** What went wrong on the way (failed host lookups and probes), for the caller's logs. */
  problems: string[];
  /** The mail hosts with their vetted addresses, by preference: whom the mailbox probe asks (SMTP_PROBE=rcpt). */
  mailHosts: MailHost[];
}

interface HostCheck {
  connectable: boolean;
  incomplete: boolean;
  problem?: string;
  /** The host's allowed addresses (vetted), when it has any. */
  addresses?: string[];
}

/** Probe mode: distinct MX hosts contacted per domain, and addresses tried per host. */
export const MAX_PROBED_HOSTS = 10;
export const MAX_PROBED_ADDRESSES = 2;

/** A failed probe may be greylisting or a hiccup: remember it for at most this long. */
const FAILED_PROBE_KEEP_MS = 60_000;

export class MailDomainInspector {
  private readonly dns: DnsClient;
  private readonly domains = new TtlCache<DomainAssessment>();
  private readonly mxAnswers = new TtlCache<MxAnswer>();
  private readonly hostAddresses = new TtlCache<HostAddresses>();
  private readonly probes = new TtlCache<boolean>();

  constructor(readonly config: ValidatorConfig) {
    this.dns = new DnsClient(config);
  }

  clear(): void {
    for (const cache of [this.domains, this.mxAnswers, this.hostAddresses, this.probes]) cache.clear();
  }

  /** `asciiDomain`: the lower-case A-label form. Throws DnsFailure when DNS cannot say. */
  assess(asciiDomain: string): Promise<DomainAssessment> {
    countMetric(this.domains.has(asciiDomain) ? 'dnsCacheHits' : 'dnsCacheMisses');
    return this.domains.remember(
      asciiDomain,
      this.config.cacheTtlMs,
      () => this.assessUncached(asciiDomain),
      (assessment) => (assessment.incomplete ? 0 : this.config.cacheTtlMs),
    );
  }

  private async assessUncached(domain: string): Promise<DomainAssessment> {
    const mx = await this.mxAnswers.remember(domain, this.config.cacheTtlMs, () => this.dns.mx(domain));
    if (mx.kind === 'nxdomain') return rejectsMail(0);

    if (mx.kind === 'mx') {
      const real = mx.records.filter((record) => record.exchange !== '');
      if (real.length === 0) return rejectsMail(mx.records.length);
      const checked = this.hostsToCheck(real);
      const skipped = new Set(real.map((record) => record.exchange).filter((host) => !checked.has(host)));
      const checks = await Promise.all(
        mx.records.map((record): HostCheck | Promise<HostCheck> =>
          checked.has(record.exchange) ? this.checkHost(record.exchange) : { connectable: false, incomplete: false },
        ),
      );
      const connectable = checks.filter((check) => check.connectable).length;
      const problems = [...new Set(checks.flatMap((check) => (check.problem ? [check.problem] : [])))];
      if (skipped.size > 0) problems.push(`${skipped.size} more MX host(s) of ${domain} not probed (limit ${MAX_PROBED_HOSTS})`);
      const byPreference = [...mx.records].sort((a, b) => a.priority - b.priority);
      const mailHosts = new Map<string, MailHost>();
      for (const record of byPreference) {
        const addresses = checks[mx.records.indexOf(record)]?.addresses;
        if (addresses?.length && !mailHosts.has(record.exchange)) mailHosts.set(record.exchange, { name: record.exchange, addresses });
      }
      return {
        mailHosts: [...mailHosts.values()],
        acceptsMail: true,
        mxRecordCount: mx.records.length,
        connectableMxRecordCount: connectable,
        canConnect: connectable > 0,
        incomplete: checks.some((check) => check.incomplete),
        problems,
      };
    }

    // No MX: the domain's own address records decide (implicit MX).
    const own = await this.addressesOf(domain);
    if (own.addresses.length === 0) {
      if (own.failure) throw own.failure;
      return rejectsMail(0);
    }
    const host = await this.checkHost(domain);
    return {
      mailHosts: host.addresses?.length ? [{ name: domain, addresses: host.addresses }] : [],
      acceptsMail: true,
      mxRecordCount: 0,
      connectableMxRecordCount: 0,
      canConnect: host.connectable,
      incomplete: host.incomplete,
      problems: host.problem ? [host.problem] : [],
    };
  }

  /** Every MX host without the probe; with it, the first MAX_PROBED_HOSTS distinct ones by preference. */
  private hostsToCheck(records: MxRecord[]): Set<string> {
    const hosts = [...records].sort((a, b) => a.priority - b.priority).map((record) => record.exchange);
    const distinct = new Set(hosts);
    return this.config.smtpProbe === 'off' ? distinct : new Set([...distinct].slice(0, MAX_PROBED_HOSTS));
  }

  private addressesOf(host: string): Promise<HostAddresses> {
    return this.hostAddresses.remember(
      host,
      this.config.cacheTtlMs,
      () => this.dns.addresses(host),
      (answer) => (answer.failure ? 0 : this.config.cacheTtlMs),
    );
  }

  /** Connectable: resolves to an allowed address and, with the probe on, greets with 220. */
  private async checkHost(host: string): Promise<HostCheck> {
    let answer: HostAddresses;
    try {
      answer = await this.addressesOf(host);
    } catch (error) {
      if (error instanceof DnsFailure) return { connectable: false, incomplete: true, problem: error.message };
      throw error;
    }
    const allowed = answer.addresses.filter((ip) => isAllowedTarget(ip, this.config.allowPrivateMx));
    if (allowed.length === 0) {
      return { connectable: false, incomplete: answer.failure !== undefined, problem: answer.failure?.message };
    }
    const targets = allowed.slice(0, MAX_PROBED_ADDRESSES);
    // Under `rcpt` the mailbox probe's own session is the connection test (validate.ts): no extra connection per host.
    if (this.config.smtpProbe !== 'tcp') return { connectable: true, incomplete: false, addresses: targets };

    const greeted = await this.probes.remember(
      host,
      this.config.cacheTtlMs,
      () =>
        probeSmtpHost(targets, {
          port: this.config.smtpPort,
          timeoutMs: this.config.smtpTimeoutMs,
          proxy: this.config.smtpProxy,
        }),
      (ok) => (ok ? this.config.cacheTtlMs : FAILED_PROBE_KEEP_MS),
    );
    if (greeted) return { connectable: true, incomplete: false, addresses: targets };
    const problem = `SMTP probe of ${host} (${targets.join(', ')}) port ${this.config.smtpPort}: no 220 greeting`;
    return { connectable: false, incomplete: false, problem };
  }
}

function rejectsMail(mxRecordCount: number): DomainAssessment {
  return {
    acceptsMail: false,
    mxRecordCount,
    connectableMxRecordCount: 0,
    canConnect: false,
    incomplete: false,
    problems: [],
    mailHosts: [],
  };
}
