import type { SmtpReply } from './smtp-dialog.ts';

/**
 * What an SMTP answer says about a mailbox (SMTP_PROBE=rcpt). Pure functions
 * over replies, tested with tables. docs/email-validation.md ("Verdicts")
 * has the same table in prose.
 */
export type Deliverability = 'deliverable' | 'undeliverable' | 'risky' | 'unknown';

/** How one RCPT TO answer reads, before the catch-all test and the provider rules are applied. */
export type RcptAnswer =
  | { kind: 'accepted' }
  /** The mailbox does not exist or is disabled: permanent. */
  | { kind: 'refused'; why: string }
  /** Mailbox full (552, 5.2.2, 4.2.2). */
  | { kind: 'full'; why: string }
  /** 4xx: greylisting, rate limits, a busy server; ask again later. */
  | { kind: 'temporary'; why: string }
  /** The server refuses the verifier, not the mailbox (blocklists, policy): says nothing about the mailbox. */
  | { kind: 'blocked'; why: string };

/**
 * Texts by which servers say they refuse the sender rather than the
 * recipient (a listed IP, a reputation or policy block). Matched only on
 * answers that carry no mailbox-specific enhanced code.
 */
const BLOCK_TEXT =
  /\b(block(ed|list)?|black ?list(ed)?|spamhaus|barracuda|spamcop|sorbs|rbl|dnsbl|reputation|banned|denied|not allowed|poor|abuse|policy|rejected due to|client host|helo|reverse dns|ptr|too many (connections|errors))\b/i;

/** A run of characters that can belong to an address in a reply's text. */
const WORD = /[^\s"'()<>[\]]+/g;

/** Shaped like `local@domain`: an `@` with something on both sides. */
const hasAddressShape = (word: string) => {
  const at = word.indexOf('@', 1);
  return at !== -1 && at < word.length - 1;
};

/**
 * A reply for logs and reasons: servers often echo the recipient, and logs
 * carry ids only (never an address), so a word shaped like one is masked.
 * Word by word, each character looked at a bounded number of times, so
 * linear in the text (a pattern spanning the `@` would retry every start of
 * a long run without one: quadratic).
 */
export const describeReply = (reply: SmtpReply) =>
  `${reply.code}${reply.enhanced ? ` ${reply.enhanced}` : ''} ${reply.text}`
    .replace(WORD, (word) => (hasAddressShape(word) ? '<address>' : word))
    .slice(0, 200);
const describe = describeReply;

/** One RCPT TO answer. */
export function readRcpt(reply: SmtpReply): RcptAnswer {
  const why = describe(reply);
  const e = reply.enhanced;
  if (reply.code >= 200 && reply.code < 300) return { kind: 'accepted' };
  // Mailbox full: 552 (RFC 5321 says a 552 to RCPT is to be read as 452), X.2.2.
  if (reply.code === 552 || e === '5.2.2' || e === '4.2.2') return { kind: 'full', why };
  if (reply.code >= 400 && reply.code < 500) return { kind: 'temporary', why };
  if (reply.code >= 500 && reply.code < 600) {
    // 5.1.x: bad destination mailbox address (5.1.1 unknown user, 5.1.0, 5.1.6 moved, 5.1.10 null MX ...).
    if (e?.startsWith('5.1.')) return { kind: 'refused', why };
    // 5.2.1: mailbox disabled.
    if (e === '5.2.1') return { kind: 'refused', why };
    // 5.4.1: Exchange Online's "Recipient address rejected: Access denied" (Directory-Based Edge Blocking: no such recipient).
    if (e === '5.4.1' && /recipient/i.test(reply.text)) return { kind: 'refused', why };
    // 5.7.x is security or policy: the sender is refused.
    if (e?.startsWith('5.7.') || e?.startsWith('5.3.') || BLOCK_TEXT.test(reply.text)) return { kind: 'blocked', why };
    // 550/551/553 with no enhanced code (or another one) are "no such user" in practice.
    if ([550, 551, 553].includes(reply.code)) return { kind: 'refused', why };
    return { kind: 'blocked', why };
  }
  return { kind: 'blocked', why };
}

/**
 * An answer to the greeting, EHLO or MAIL FROM, which concern the sender:
 * 2xx/3xx go on, 4xx is temporary, 5xx means this verifier is refused
 * (`unknown`, never `undeliverable`: the mailbox was not even asked about).
 */
export function readSessionReply(reply: SmtpReply, expected: number): 'ok' | 'temporary' | 'blocked' {
  if (reply.code === expected || (expected === 250 && reply.code >= 200 && reply.code < 300)) return 'ok';
  if (reply.code >= 400 && reply.code < 500) return 'temporary';
  return 'blocked';
}

/**
 * Providers whose RCPT answers are known not to tell an existing mailbox from
 * a missing one. A `250` from them reads as `unknown` with `is_catch_all`
 * null, not as a catch-all domain (which would be `risky`) and never as
 * `deliverable`; a refusal they do give still counts.
 *
 * Where the rules come from:
 * - Microsoft 365 / Exchange Online Protection (`*.mail.protection.outlook.com`):
 *   tenants without Directory-Based Edge Blocking accept any recipient at
 *   RCPT and bounce later, so every address of the domain looks catch-all
 *   (reacherhq/check-if-email-exists issue #1185, "Microsoft teams email
 *   address is classed as catch all, even though it isn't"; Microsoft's
 *   Exchange Online documentation on Directory-Based Edge Blocking).
 * - Yahoo and AOL (`*.yahoodns.net`): accept every recipient at RCPT for
 *   unknown senders (the reason Reacher checks Yahoo by other means, not SMTP;
 *   its README lists Yahoo among the providers SMTP cannot verify).
 * The table is short on purpose: a rule says "do not trust a 250 here", so a
 * wrong rule only costs certainty, never a false `undeliverable`.
 */
export interface ProviderRule {
  provider: string;
  mx: RegExp;
}

export const ACCEPT_ALL_PROVIDERS: readonly ProviderRule[] = [
  { provider: 'Microsoft 365 (Exchange Online Protection)', mx: /(^|\.)mail\.protection\.outlook\.com$/i },
  { provider: 'Yahoo / AOL', mx: /(^|\.)yahoodns\.net$/i },
];

export function acceptAllProvider(mxHost: string): string | undefined {
  return ACCEPT_ALL_PROVIDERS.find((rule) => rule.mx.test(mxHost.replace(/\.$/, '')))?.provider;
}

/** The probe's finding for one address. `retry`: only temporary answers so far; ask again later. */
export interface MailboxFinding {
  deliverability: Deliverability | 'retry';
  isCatchAll: boolean | null;
  /** Why, for logs and the retry reason. */
  why?: string;
  /** False when no session could be opened with any address of the host (it is not connectable). */
  connected?: boolean;
}

/**
 * The catch-all test's outcome: `true` a random address of the domain was
 * accepted, `false` refused, `'temporary'` only a 4xx so far (ask again),
 * `null` no answer that says (the verifier was refused).
 */
export type CatchAll = boolean | 'temporary' | null;

export function catchAllAnswer(kind: RcptAnswer['kind']): CatchAll {
  if (kind === 'accepted') return true;
  if (kind === 'refused') return false;
  return kind === 'temporary' ? 'temporary' : null;
}

/** The verdict from the address's RCPT answer and the catch-all test, under the provider rules. */
export function mailboxFinding(answer: RcptAnswer, catchAllTest: CatchAll, provider: string | undefined): MailboxFinding {
  const catchAll = catchAllTest === 'temporary' ? null : catchAllTest;
  switch (answer.kind) {
    case 'refused':
      return { deliverability: 'undeliverable', isCatchAll: catchAll, why: answer.why };
    case 'full':
      return { deliverability: 'risky', isCatchAll: catchAll, why: answer.why };
    case 'temporary':
      return { deliverability: 'retry', isCatchAll: catchAll, why: answer.why };
    case 'blocked':
      return { deliverability: 'unknown', isCatchAll: null, why: answer.why };
    case 'accepted':
      if (provider) return { deliverability: 'unknown', isCatchAll: null, why: `${provider} accepts every address at RCPT` };
      if (catchAll === true) return { deliverability: 'risky', isCatchAll: true, why: 'the domain accepts every address (catch-all)' };
      if (catchAll === false) return { deliverability: 'deliverable', isCatchAll: false };
      if (catchAllTest === 'temporary')
        return { deliverability: 'retry', isCatchAll: null, why: 'the catch-all test got only a temporary answer' };
      return {
        deliverability: 'unknown',
        isCatchAll: null,
        why: 'the catch-all test was refused: accepted, but the domain may accept every address',
      };
  }
}
