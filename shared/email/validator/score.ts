/**
 * The quality score: 0..100, the sum of the points of every good signal an
 * address shows. Deterministic (same signals, same score) and monotonic
 * (gaining a good signal never lowers it). An address whose domain does not
 * accept mail is capped at INVALID_SCORE_CAP however tidy it looks otherwise.
 *
 * Signals that say nothing about deliverability score nothing either: free
 * providers, gov/edu/mil and subdomains are neither good nor bad.
 * `deliverability` then caps the sum (computeScore): an undeliverable mailbox
 * scores at most INVALID_SCORE_CAP, a risky one at most RISKY_SCORE_CAP.
 */
export const SCORE_WEIGHTS = [
  {
    signal: 'accepts_mail',
    points: 50,
    description: 'The domain accepts mail: it has MX records, or A/AAAA records (implicit MX), and no null MX (is_valid).',
  },
  {
    signal: 'has_mx_records',
    points: 10,
    description: 'The domain publishes real MX records rather than relying on the implicit-MX fallback.',
  },
  {
    signal: 'can_connect',
    points: 15,
    description: 'At least one mail host is connectable (public address; greets with 220 when the SMTP probe is on).',
  },
  {
    signal: 'all_hosts_connectable',
    points: 5,
    description: 'Every mail host is connectable, not just one (under implicit MX: the domain host is).',
  },
  {
    signal: 'not_disposable',
    points: 10,
    description: 'The domain is not a known disposable (throwaway) mail service.',
  },
  {
    signal: 'not_role_account',
    points: 5,
    description: 'The local part is not a role name such as admin, info or noreply (is_username_generic false).',
  },
  {
    signal: 'not_alias',
    points: 5,
    description: 'The local part has no +tag (is_alias false).',
  },
] as const satisfies readonly { signal: string; points: number; description: string }[];

export type ScoreSignal = (typeof SCORE_WEIGHTS)[number]['signal'];
export type ScoreSignals = Record<ScoreSignal, boolean>;

/** The most an address whose domain does not accept mail, or whose mailbox was refused, can score. */
export const INVALID_SCORE_CAP = 10;
/** The most a `risky` address (catch-all domain, full mailbox, disposable domain) can score. */
export const RISKY_SCORE_CAP = 50;

/**
 * The sum of the points, then capped by deliverability: `undeliverable` at
 * INVALID_SCORE_CAP, `risky` at RISKY_SCORE_CAP; `deliverable` and `unknown`
 * keep the sum (`unknown` is no evidence either way, which is every address
 * when the mailbox is not probed).
 */
export function computeScore(signals: ScoreSignals, deliverability: ScoreInputs['deliverability'] = 'unknown'): number {
  const sum = SCORE_WEIGHTS.reduce((total, row) => total + (signals[row.signal] ? row.points : 0), 0);
  let capped = signals.accepts_mail ? sum : Math.min(sum, INVALID_SCORE_CAP);
  if (deliverability === 'undeliverable') capped = Math.min(capped, INVALID_SCORE_CAP);
  if (deliverability === 'risky') capped = Math.min(capped, RISKY_SCORE_CAP);
  return Math.max(0, Math.min(100, capped));
}

/** The inputs the score reads, from the fields of a result. */
export interface ScoreInputs {
  is_valid: boolean;
  mx_record_count: number;
  connectable_mx_record_count: number;
  can_connect: boolean;
  is_username_generic: boolean;
  is_alias: boolean;
  is_disposable: boolean;
  deliverability?: 'deliverable' | 'undeliverable' | 'risky' | 'unknown';
}

export function scoreSignals(r: ScoreInputs): ScoreSignals {
  return {
    accepts_mail: r.is_valid,
    has_mx_records: r.is_valid && r.mx_record_count > 0,
    can_connect: r.can_connect,
    all_hosts_connectable: r.can_connect && r.connectable_mx_record_count === r.mx_record_count,
    not_disposable: !r.is_disposable,
    not_role_account: !r.is_username_generic,
    not_alias: !r.is_alias,
  };
}
