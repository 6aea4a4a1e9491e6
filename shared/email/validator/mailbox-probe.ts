import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import type { ValidatorConfig } from './config.ts';
import {
  acceptAllProvider,
  catchAllAnswer,
  describeReply,
  mailboxFinding,
  type CatchAll,
  readRcpt,
  readSessionReply,
  type MailboxFinding,
} from './mailbox-verdict.ts';
import { SmtpDialog, SmtpLimitError, type Connect, type DialogTarget, type SmtpReply } from './smtp-dialog.ts';
import type { TtlCache } from './ttl-cache.ts';

/**
 * The mailbox probe (SMTP_PROBE=rcpt): asks a domain's mail host whether it
 * would take mail for an address, the way a sender would, and stops before
 * DATA. docs/email-validation.md ("Mailbox probe") explains the choices:
 *
 * - Politeness: at most `smtpMaxConnectionsPerHost` sessions to one MX host
 *   at once in this process. Addresses wait in the host's queue and the open
 *   sessions take them one after another, so the addresses of a batch share
 *   a few sessions (several RCPT TO each, RSET between domains) instead of
 *   one connection per address.
 * - The catch-all test (RCPT TO a random address of the domain) runs once per
 *   domain and is cached like MX answers; the random local part is fixed per
 *   domain in a process, so a greylisting server sees the same triple when
 *   it is asked again.
 * - A server that refuses the verifier (a 5xx greeting or MAIL FROM, a block
 *   message) makes its addresses `unknown`, never `undeliverable`.
 * - Temporary answers make an address `retry`: the worker asks again later.
 */
export interface MailHost {
  /** The MX host name (or the domain, under implicit MX): the provider rules match it. */
  name: string;
  /** Vetted addresses, in the order to try. */
  addresses: string[];
}

interface Waiting {
  domain: string;
  address: string;
  resolve: (finding: MailboxFinding) => void;
  /** Sessions this address was taken by that broke before its answer. */
  attempts: number;
}

interface HostQueue {
  host: MailHost;
  waiting: Waiting[];
  active: number;
}

/** Recipients per envelope before an RSET (RFC 5321 lets a server stop at 100). */
const RCPT_PER_ENVELOPE = 50;
/** RCPT commands per session before it says QUIT and another one starts. */
const RCPT_PER_SESSION = 200;
/** A session that breaks mid-dialog gives its current address this many chances. */
const MAX_ATTEMPTS = 2;

/**
 * What the prober uses from modules the functions load at init anyway:
 * handed in rather than imported, so that this module's chunk (loaded only
 * under SMTP_PROBE=rcpt) shares no code with the entry and esbuild does not
 * split a shared chunk off the init path (docs/performance.md, Code splitting).
 */
export interface ProberDeps {
  newCache: <T>() => TtlCache<T>;
  connect: Connect;
}

export class MailboxProber {
  private readonly queues = new Map<string, HostQueue>();
  private readonly catchAll: TtlCache<CatchAll>;
  private readonly findings: TtlCache<MailboxFinding>;
  private readonly probeLocals = new Map<string, string>();
  /** Sessions opened so far (tests and the bench read it). */
  sessionsOpened = 0;
  /** Bytes read from mail hosts by closed connections, and the connections still open (tests read the sum). */
  private closedBytes = 0;
  private readonly sockets = new Set<Socket>();

  constructor(
    private readonly config: ValidatorConfig,
    private readonly deps: ProberDeps,
  ) {
    this.catchAll = deps.newCache();
    this.findings = deps.newCache();
  }

  /** Bytes read from mail hosts so far, as the sockets count them. */
  get bytesRead(): number {
    let open = 0;
    for (const socket of this.sockets) open += socket.bytesRead;
    return this.closedBytes + open;
  }

  clear(): void {
    this.catchAll.clear();
    this.findings.clear();
  }

  /**
   * The finding for `address` (ASCII domain form) at `domain`, whose mail
   * hosts are `hosts` (preference order, vetted). Answers are cached for the
   * TTL; `retry` findings are not.
   */
  check(domain: string, address: string, hosts: MailHost[]): Promise<MailboxFinding> {
    const key = `${address.slice(0, address.lastIndexOf('@'))}@${domain}`;
    return this.findings.remember(
      key,
      this.config.cacheTtlMs,
      () => this.enqueue(domain, address, hosts),
      (finding) => (finding.deliverability === 'retry' ? 0 : this.config.cacheTtlMs),
    );
  }

  private enqueue(domain: string, address: string, hosts: MailHost[]): Promise<MailboxFinding> {
    const host = hosts[0];
    if (!host) return Promise.resolve({ deliverability: 'unknown', isCatchAll: null, why: 'no mail host to ask' });
    let queue = this.queues.get(host.name);
    if (!queue) {
      queue = { host, waiting: [], active: 0 };
      this.queues.set(host.name, queue);
    }
    const q = queue;
    return new Promise<MailboxFinding>((resolve) => {
      q.waiting.push({ domain, address, resolve, attempts: 0 });
      this.startSessions(q);
    });
  }

  private startSessions(queue: HostQueue): void {
    while (queue.active < this.config.smtpMaxConnectionsPerHost && queue.waiting.length > queue.active) {
      queue.active++;
      void this.session(queue).finally(() => {
        queue.active--;
        if (queue.waiting.length > 0) this.startSessions(queue);
        else if (queue.active === 0) this.queues.delete(queue.host.name);
      });
    }
  }

  /** Settles every waiting address of the queue with the same finding (the host itself answered). */
  private settleAll(queue: HostQueue, finding: MailboxFinding): void {
    for (const waiting of queue.waiting.splice(0)) waiting.resolve(finding);
  }

  private async session(queue: HostQueue): Promise<void> {
    const { host } = queue;
    const opened = await this.open(host);
    if ('finding' in opened) return this.settleAll(queue, opened.finding);
    const { dialog } = opened;
    const provider = acceptAllProvider(host.name);
    let envelopeDomain: string | undefined;
    let envelopeRcpts = 0;
    let sessionRcpts = 0;
    let current: Waiting | undefined;
    try {
      const ehlo = await dialog.command(`EHLO ${this.config.smtpHeloName}`);
      let extensions = ehlo.text;
      if (ehlo.code !== 250) {
        const helo = await dialog.command(`HELO ${this.config.smtpHeloName}`);
        const read = readSessionReply(helo, 250);
        if (read !== 'ok') return this.settleAll(queue, sessionFinding(read, helo, 'HELO'));
        extensions = '';
      }
      if (/\bSTARTTLS\b/i.test(extensions) && (await dialog.startTls(host.name))) {
        const again = await dialog.command(`EHLO ${this.config.smtpHeloName}`);
        const read = readSessionReply(again, 250);
        if (read !== 'ok') return this.settleAll(queue, sessionFinding(read, again, 'EHLO after STARTTLS'));
      }
      while (sessionRcpts < RCPT_PER_SESSION) {
        // Prefer an address of the envelope's domain: one MAIL FROM serves them all.
        const index = Math.max(
          0,
          queue.waiting.findIndex((w) => w.domain === envelopeDomain),
        );
        current = queue.waiting.splice(index, 1)[0];
        if (!current) break;
        current.attempts++;
        if (current.domain !== envelopeDomain || envelopeRcpts >= RCPT_PER_ENVELOPE) {
          if (envelopeDomain !== undefined) await dialog.command('RSET');
          const from = await dialog.command(`MAIL FROM:<${this.config.smtpMailFrom}>`);
          const read = readSessionReply(from, 250);
          if (read !== 'ok') {
            current.resolve(sessionFinding(read, from, 'MAIL FROM'));
            current = undefined;
            return this.settleAll(queue, sessionFinding(read, from, 'MAIL FROM'));
          }
          envelopeDomain = current.domain;
          envelopeRcpts = 0;
        }
        const catchAll = await this.catchAll.remember(
          current.domain,
          this.config.cacheTtlMs,
          async () => {
            envelopeRcpts++;
            sessionRcpts++;
            const answer = readRcpt(await dialog.command(`RCPT TO:<${this.probeLocal(current!.domain)}@${current!.domain}>`));
            return catchAllAnswer(answer.kind);
          },
          // Greylisted too: not kept, the next attempt asks again.
          (value) => (value === 'temporary' ? 0 : this.config.cacheTtlMs),
        );
        envelopeRcpts++;
        sessionRcpts++;
        const reply = await dialog.command(`RCPT TO:<${current.address}>`);
        current.resolve(mailboxFinding(readRcpt(reply), catchAll, provider));
        current = undefined;
        // 421: the server is closing the session; what is left waits for the next one.
        if (reply.code === 421) break;
      }
    } catch (error) {
      if (error instanceof SmtpLimitError) {
        // A host past a cap would flood the next session as well: its addresses are unknown, not retried.
        const hostile: MailboxFinding = {
          deliverability: 'unknown',
          isCatchAll: null,
          why: `SMTP dialog with ${host.name}: ${error.message}`,
        };
        current?.resolve(hostile);
        current = undefined;
        return this.settleAll(queue, hostile);
      }
      const broken: MailboxFinding = {
        deliverability: 'retry',
        isCatchAll: null,
        why: `SMTP dialog with ${host.name}: ${(error as Error).message}`,
      };
      if (!current) {
        // Broken before any address was asked about (EHLO, STARTTLS): the next session would fare no better now.
        this.settleAll(queue, broken);
      } else if (current.attempts < MAX_ATTEMPTS) {
        queue.waiting.unshift(current);
      } else {
        current.resolve(broken);
      }
    } finally {
      dialog.quit();
    }
  }

  /** The handed-in connect, with each socket's bytes counted. */
  private readonly counted = async (target: DialogTarget, timeoutMs: number): Promise<Socket> => {
    const socket = await this.deps.connect(target, timeoutMs);
    this.sockets.add(socket);
    socket.once('close', () => {
      this.sockets.delete(socket);
      this.closedBytes += socket.bytesRead;
    });
    return socket;
  };

  /** Connects to the host's first address that answers, and reads its greeting. */
  private async open(host: MailHost): Promise<{ dialog: SmtpDialog } | { finding: MailboxFinding }> {
    let lastError = 'no address';
    for (const address of host.addresses) {
      let opened: Awaited<ReturnType<typeof SmtpDialog.open>>;
      try {
        this.sessionsOpened++;
        const target = { address, port: this.config.smtpPort, proxy: this.config.smtpProxy };
        opened = await SmtpDialog.open(this.counted, target, this.config.smtpTimeoutMs);
      } catch (error) {
        lastError = (error as Error).message;
        continue;
      }
      const read = readSessionReply(opened.greeting, 220);
      if (read === 'ok') return { dialog: opened.dialog };
      opened.dialog.quit();
      return { finding: sessionFinding(read, opened.greeting, 'greeting') };
    }
    const why = `could not open an SMTP session with ${host.name}: ${lastError}`;
    return { finding: { deliverability: 'unknown', isCatchAll: null, why, connected: false } };
  }

  /** A random local part per domain, fixed for the process (greylisting keys on it). */
  private probeLocal(domain: string): string {
    let local = this.probeLocals.get(domain);
    if (!local) {
      local = `no-such-mailbox-${randomBytes(8).toString('hex')}`;
      if (this.probeLocals.size > 10_000) this.probeLocals.clear();
      this.probeLocals.set(domain, local);
    }
    return local;
  }
}

function sessionFinding(read: 'temporary' | 'blocked', reply: SmtpReply, step: string): MailboxFinding {
  const why = `${step}: ${describeReply(reply)}`;
  return read === 'temporary'
    ? { deliverability: 'retry', isCatchAll: null, why }
    : { deliverability: 'unknown', isCatchAll: null, why: `the server refuses this verifier (${why})` };
}
