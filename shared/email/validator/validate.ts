import type { ValidationOutcome, ValidationResult } from '../result.ts';
import { prepareProfile, profileAddress } from './address-profile.ts';
import { forgetValidatorConfig, validatorConfig } from './config.ts';
import { DnsFailure } from './dns-lookup.ts';
import { MailDomainInspector, type DomainAssessment } from './mail-domain.ts';
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

function currentInspector(): MailDomainInspector {
  const config = validatorConfig(); // throws ValidatorConfigError on a bad setting
  if (inspector?.config !== config) inspector = new MailDomainInspector(config);
  return inspector;
}

/** Forget cached DNS answers and probe results (tests; production lets the TTL do it). */
export function clearValidatorCache(): void {
  inspector?.clear();
}

/** Re-read the environment at the next validation, with empty caches. */
export function resetValidatorConfig(): void {
  forgetValidatorConfig();
  inspector?.clear();
  inspector = undefined;
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
  let domain: DomainAssessment;
  try {
    domain = await withDeadline(domains.assess(syntax.asciiDomain), options.deadline);
  } catch (error) {
    if (error instanceof DnsFailure) return { status: 'error', reason: error.message };
    if (error instanceof DeadlineExceeded) {
      return { status: 'error', reason: `validation of ${syntax.asciiDomain} did not finish before the deadline` };
    }
    throw error;
  }

  const { is_disposable, ...flags } = profile;
  const fields = {
    email: address,
    is_valid: domain.acceptsMail,
    can_connect: domain.canConnect,
    mx_record_count: domain.mxRecordCount,
    connectable_mx_record_count: domain.connectableMxRecordCount,
    ...flags,
  };
  const score = computeScore(scoreSignals({ ...fields, is_disposable }));
  const result: ValidationResult = { ...fields, score };
  return { status: 'completed', result, ...(domain.problems.length ? { problems: domain.problems } : {}) };
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
