/**
 * The email validator engine: pure domain code (no AWS, no HTTP) that the
 * API handlers and the worker call. See the files for the decisions:
 * syntax.ts (what an address may look like), address-profile.ts (flags from
 * the text), mail-domain.ts (MX, null MX, implicit MX, connectability),
 * address-policy.ts (SSRF guard), score.ts (weights), config.ts (settings).
 *
 * Its heavy dependencies (tr46, tldts, the domain lists, socks) are imported
 * on first use: validateEmail does it itself; before the synchronous checks,
 * await prepareSyntax / prepareProfile (or loadValidator for everything).
 */
export { checkSyntax, prepareSyntax } from './syntax.ts';
export { loadValidator } from './load.ts';
export { validateEmail, clearValidatorCache, resetValidatorConfig, currentProber, type ValidateOptions } from './validate.ts';
export { didYouMean, suggestDomain, editDistance, POPULAR_DOMAINS } from './did-you-mean.ts';
export type { Deliverability } from './mailbox-verdict.ts';
export {
  validatorConfig,
  readValidatorConfig,
  VALIDATOR_ENV_VARS,
  ValidatorConfigError,
  type ValidatorConfig,
  type SmtpProbeMode,
  SMTP_PROBE_MODES,
} from './config.ts';
export {
  SCORE_WEIGHTS,
  INVALID_SCORE_CAP,
  RISKY_SCORE_CAP,
  computeScore,
  scoreSignals,
  type ScoreSignal,
  type ScoreSignals,
} from './score.ts';
export { ROLE_CATEGORIES, roleCategory, isRoleAccount, type RoleCategory } from './roles.ts';
export { profileAddress, prepareProfile, canonicalEmail, splitAlias, type AddressProfile } from './address-profile.ts';
export { isFreeProvider, isDisposableDomain, loadMailboxProviders } from './mailbox-providers.ts';
export { placeDomain, institutionKind, loadPublicSuffixList, type DomainPlacement, type InstitutionKind } from './public-suffix.ts';
export { classifyAddress, isAllowedTarget, type AddressClass } from './address-policy.ts';
export type { SyntaxCheck, ValidationOutcome, ValidationResult } from '../result.ts';
