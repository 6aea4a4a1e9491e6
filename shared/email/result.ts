/**
 * What the validator engine produces for one address: every validation field
 * of the email object of the API. Pure data, no AWS, no HTTP.
 */
export interface ValidationResult {
  /** The address as given. */
  email: string;
  is_valid: boolean;
  /** 0..100, higher is better; see score.ts for the weights. */
  score: number;
  can_connect: boolean;
  mx_record_count: number;
  connectable_mx_record_count: number;
  is_username_generic: boolean;
  is_alias: boolean;
  is_gov: boolean;
  is_edu: boolean;
  is_mil: boolean;
  is_free: boolean;
  is_subdomain: boolean;
  canonical_email: string;
  /** The domain is a throwaway-mailbox service. */
  is_disposable: boolean;
  /** The address with a likely mistyped domain corrected; null when nothing better is likely. */
  did_you_mean: string | null;
  /** The domain accepts any address (null: the mailbox was not probed, or the test got no answer). */
  is_catch_all: boolean | null;
  deliverability: 'deliverable' | 'undeliverable' | 'risky' | 'unknown';
}

/**
 * A validation either finishes, or fails transiently (DNS kept failing) and
 * may be retried. A finished one may still report problems on the way (a mail
 * host whose lookup failed or that did not greet), for the caller's logs.
 */
export type ValidationOutcome =
  | { status: 'completed'; result: ValidationResult; problems?: string[] }
  /** `unfinished`: the caller's deadline came first (the work goes on, and its answers land in the caches). */
  | { status: 'error'; reason: string; unfinished?: true }
  /**
   * The mail host answered only temporarily (greylisting, 4xx): ask again
   * later; `result` is what to record if it never answers (deliverability `unknown`).
   */
  | { status: 'deferred'; reason: string; result: ValidationResult };

/** Syntax check outcome: the parts on success, a human-readable reason otherwise. */
export type SyntaxCheck = { ok: true; local: string; domain: string; asciiDomain: string } | { ok: false; reason: string };
