import type { ValidationOutcome, ValidationResult } from '../result.ts';
import { prepareProfile, profileAddress } from './address-profile.ts';
import { forgetValidatorConfig, validatorConfig } from './config.ts';
import { DnsFailure } from './dns-lookup.ts';
import { didYouMean } from './did-you-mean.ts';
import { MailDomainInspector, type DomainAssessment } from './mail-domain.ts';
import type { MailboxProber } from './mailbox-probe.ts';
import type { Deliverability, MailboxFinding } from './mailbox-verdict.ts';
import { connectSmtp } from './smtp-probe.ts';
import { TtlCache } from './ttl-cache.ts';
import { computeScore, scoreSignals } from './score.ts';
import { checkSyntax, prepareSyntax } from './syntax.ts';

export interface ValidateOptions {
  /** Epoch milliseconds. Past it the validation answers `error` (retry later) instead of waiting on. */
  deadline?: number;
}

/**
 * One inspector (DNS client plus caches) per configuration: when tests
 * change the environment and reset the config, the caches go with it.
 */
let inspector: MailDomainInspector | undefined;
/** SMTP_PROBE=rcpt only: the mailbox probe, imported at its first use (the other modes never load it). */
let prober: Promise<MailboxProber> | undefined;
let loadedProber: MailboxProber | undefined;

function currentInspector(): MailDomainInspector {
  const config = validatorConfig(); // throws ValidatorConfigError on a bad setting
  if (inspector?.config !== config) {
    inspector = new MailDomainInspector(config);
    loadedProber = undefined;
    prober =
      config.smtpProbe === 'rcpt'
        ? import('./mailbox-probe.ts').then(
            ({ MailboxProber }) => (loadedProber = new MailboxProber(config, { newCache: () => new TtlCache(), connect: connectSmtp })),
          )
        : undefined;
  }
  return inspector;
}

/** The mailbox prober of the current configuration (SMTP_PROBE=rcpt), for tests and the bench to count its sessions. */
export function currentProber(): MailboxProber | undefined {
  currentInspector();
  return loadedProber;
}

/** Forget cached DNS answers and probe results (tests; production lets the TTL do it). */
export function clearValidatorCache(): void {
  inspector?.clear();
  loadedProber?.clear();
}

/** Re-read the environment at the next validation, with empty caches. */
export function resetValidatorConfig(): void {
  forgetValidatorConfig();
  clearValidatorCache();
  inspector = undefined;
  prober = undefined;
  loadedProber = undefined;
}

class DeadlineExceeded extends Error {}

/**
 * Validates one address: syntax, the text-only flags, whether its domain
 * accepts mail, connectability, and the score. Work on the domain is shared
 * and cached per process; the deadline only bounds how long this caller
 * waits (the lookup goes on and lands in the cache for the next attempt).
 *
 * A syntactically invalid address completes as invalid with score 0; callers
 * normally reject those earlier with checkSyntax's reason. The first call in a
 * process imports the lists and tables the checks need (prepareSyntax,
 * prepareProfile); later calls find them loaded.
 */
export async function validateEmail(address: string, options: ValidateOptions = {}): Promise<ValidationOutcome> {
  const domains = currentInspector();
  await prepareSyntax([address]);
  const syntax = checkSyntax(address);
  if (!syntax.ok) return { status: 'completed', result: unparseable(address) };

  await prepareProfile([syntax.asciiDomain]);
  const profile = profileAddress(syntax.local, syntax.asciiDomain);
  const mailbox = prober;
  let domain: DomainAssessment;
  let finding: MailboxFinding | undefined;
  try {
    domain = await withDeadline(domains.assess(syntax.asciiDomain), options.deadline);
    if (mailbox && domain.acceptsMail && !profile.is_disposable) {
      const asked = mailbox.then((p) => p.check(syntax.asciiDomain, `${syntax.local}@${syntax.asciiDomain}`, domain.mailHosts));
      finding = await withDeadline(asked, options.deadline);
    }
  } catch (error) {
    if (error instanceof DnsFailure) return { status: 'error', reason: error.message };
    if (error instanceof DeadlineExceeded) {
      return { status: 'error', reason: `validation of ${syntax.asciiDomain} did not finish before the deadline`, unfinished: true };
    }
    throw error;
  }

  // Under `rcpt` the session is the connection test: a host no session could be opened with is not connectable.
  const unreachable = finding?.connected === false;
  const deliverability = verdict(domain.acceptsMail, profile.is_disposable, finding);
  const fields = {
    email: address,
    is_valid: domain.acceptsMail && deliverability !== 'undeliverable',
    can_connect: domain.canConnect && !unreachable,
    mx_record_count: domain.mxRecordCount,
    connectable_mx_record_count: unreachable ? 0 : domain.connectableMxRecordCount,
    ...profile,
    did_you_mean: didYouMean(syntax.local, syntax.asciiDomain),
    is_catch_all: finding ? finding.isCatchAll : null,
    deliverability,
  };
  const result: ValidationResult = { ...fields, score: computeScore(scoreSignals(fields), deliverability) };
  // A mailbox the server refused is an answer; only a probe that could not decide is a problem worth a log line.
  const problems = [...domain.problems, ...(finding?.why && finding.deliverability === 'unknown' ? [finding.why] : [])];
  if (finding?.deliverability === 'retry') return { status: 'deferred', reason: finding.why ?? 'temporary SMTP answer', result };
  return { status: 'completed', result, ...(problems.length ? { problems } : {}) };
}

/**
 * deliverability: syntax and DNS decide `undeliverable` in every mode; a
 * disposable domain is `risky` in every mode; beyond that only the mailbox
 * probe can say, so without it the answer is `unknown`. A `retry` finding
 * reads `unknown` (what is recorded if the host never answers for good).
 */
function verdict(acceptsMail: boolean, disposable: boolean, finding: MailboxFinding | undefined): Deliverability {
  if (!acceptsMail) return 'undeliverable';
  if (disposable) return 'risky';
  if (!finding || finding.deliverability === 'retry') return 'unknown';
  return finding.deliverability;
}

function unparseable(address: string): ValidationResult {
  return {
    email: address,
    is_valid: false,
    score: 0,
    can_connect: false,
    mx_record_count: 0,
    connectable_mx_record_count: 0,
    is_username_generic: false,
    is_alias: false,
    is_gov: false,
    is_edu: false,
    is_mil: false,
    is_free: false,
    is_subdomain: false,
    canonical_email: address,
    is_disposable: false,
    did_you_mean: null,
    is_catch_all: null,
    deliverability: 'undeliverable',
  };
}

/**
 * Races the shared work against this caller's deadline. An answer already in
 * the cache still wins when the deadline has passed (a settled promise beats
 * a zero-delay timer).
 */
function withDeadline<T>(work: Promise<T>, deadline: number | undefined): Promise<T> {
  if (deadline === undefined) return work;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceeded()), Math.max(0, deadline - Date.now()));
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}
