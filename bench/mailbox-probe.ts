/**
 * The mailbox probe (SMTP_PROBE=rcpt) against a loopback SMTP server that
 * answers like a remote one: 1,000 addresses over 10 domains, each domain
 * with its own MX host, every delayed answer (greeting, MAIL FROM, RCPT TO)
 * taking 50 to 200 ms. Reported against the ideal: the delayed commands the
 * dialog cannot do without (per domain: one greeting, one MAIL FROM, the
 * catch-all RCPT and one RCPT per address), spread over every connection
 * allowed (SMTP_MAX_CONNECTIONS_PER_HOST per host), at the mean latency.
 * Run by bench/run.ts in its own process; prints one JSON object.
 */
import { startDnsServer } from '../scripts/local/dns-server.ts';
import { startMailboxServer } from '../test/steps/smtp-mailboxes.ts';
import { currentProber, resetValidatorConfig, validateEmail } from '#shared/email/validator/index';

const DOMAINS = 10;
const PER_DOMAIN = 100;
const MIN_MS = 50;
const MAX_MS = 200;
const CONNECTIONS_PER_HOST = 2;

export interface MailboxProbeResult {
  wallSeconds: number;
  idealSeconds: number;
  sessions: number;
  maxConcurrent: number;
  addresses: number;
  deliverable: number;
  undeliverable: number;
}

export async function mailboxProbe(): Promise<MailboxProbeResult> {
  const domains = Array.from({ length: DOMAINS }, (_, i) => `d${i}.bench`);
  const dns = await startDnsServer(
    Object.fromEntries(
      domains.flatMap((d) => [
        [d, { mx: [{ priority: 10, exchange: `mx.${d}` }] }],
        [`mx.${d}`, { a: ['127.0.0.1'] }],
      ]),
    ),
  );
  // Half the mailboxes of each domain exist.
  const existing = Object.fromEntries(Array.from({ length: PER_DOMAIN / 2 }, (_, i) => [`user${i}`, 'exists' as const]));
  const smtp = await startMailboxServer(Object.fromEntries(domains.map((d) => [d, { mailboxes: existing }])), {
    latencyMs: () => MIN_MS + Math.random() * (MAX_MS - MIN_MS),
  });
  Object.assign(process.env, {
    DNS_SERVERS: dns.address,
    ALLOW_PRIVATE_MX: 'true',
    SMTP_PROBE: 'rcpt',
    SMTP_PORT: String(smtp.port),
    SMTP_TIMEOUT_MS: '5000',
    SMTP_MAX_CONNECTIONS_PER_HOST: String(CONNECTIONS_PER_HOST),
  });
  resetValidatorConfig();
  try {
    const addresses = domains.flatMap((d) => Array.from({ length: PER_DOMAIN }, (_, i) => `user${i}@${d}`));
    const started = performance.now();
    const outcomes = await Promise.all(addresses.map((a) => validateEmail(a)));
    const wallSeconds = (performance.now() - started) / 1000;
    const verdicts = outcomes.map((o) => (o.status === 'completed' ? o.result.deliverability : o.status));
    const commandsPerDomain = 1 + 1 + 1 + PER_DOMAIN; // greeting, MAIL FROM, catch-all RCPT, one RCPT each
    const meanSeconds = (MIN_MS + MAX_MS) / 2 / 1000;
    return {
      wallSeconds,
      idealSeconds: ((commandsPerDomain * DOMAINS) / (CONNECTIONS_PER_HOST * DOMAINS)) * meanSeconds,
      sessions: currentProber()?.sessionsOpened ?? 0,
      maxConcurrent: smtp.maxConcurrent(),
      addresses: addresses.length,
      deliverable: verdicts.filter((v) => v === 'deliverable').length,
      undeliverable: verdicts.filter((v) => v === 'undeliverable').length,
    };
  } finally {
    await smtp.stop();
    await dns.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await mailboxProbe()));
  process.exit(0);
}
