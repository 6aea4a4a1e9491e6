import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';

/**
 * A real SMTP server on loopback (the `smtp-server` package) whose answers
 * are configured per recipient domain, for the mailbox probe
 * (SMTP_PROBE=rcpt). It counts what a verifier must be judged on: sessions
 * opened, the most open at once, every command, and whether DATA ever came.
 */
export type MailboxState = 'exists' | 'unknown' | 'disabled' | 'full';

export interface DomainBehaviour {
  /** Local parts and how they answer; any other local part is unknown (or accepted when catchAll). */
  mailboxes?: Record<string, MailboxState>;
  catchAll?: boolean;
  /** Every address is answered 451 4.7.1 the first `greylistTimes` times it is asked, then as configured. */
  greylistTimes?: number;
  /** The server refuses the verifier at MAIL FROM with a block message. */
  blockAtMailFrom?: boolean;
}

export interface MailboxServer {
  port: number;
  sessions(): number;
  maxConcurrent(): number;
  /** RCPT TO addresses seen, in order. */
  recipients(): string[];
  dataCommands(): number;
  stop(): Promise<void>;
}

export interface MailboxServerOptions {
  /** Answered 554 at connect: the server refuses this client altogether. */
  refuseConnections?: boolean;
  /** Delay before each answer (connect, MAIL FROM, RCPT TO), ms: a realistic remote server. */
  latencyMs?: () => number;
  port?: number;
  host?: string;
  /** Offer STARTTLS (with the package's built-in self-signed certificate). */
  starttls?: boolean;
}

const smtpError = (code: number, message: string) => Object.assign(new Error(message), { responseCode: code });

export async function startMailboxServer(
  domains: Record<string, DomainBehaviour>,
  options: MailboxServerOptions = {},
): Promise<MailboxServer> {
  let sessions = 0;
  let open = 0;
  let maxConcurrent = 0;
  let data = 0;
  const recipients: string[] = [];
  const greylisted = new Map<string, number>();
  const later = (callback: () => void) => {
    const ms = options.latencyMs?.() ?? 0;
    if (ms > 0) setTimeout(callback, ms);
    else callback();
  };

  const config: SMTPServerOptions = {
    logger: false,
    hideENHANCEDSTATUSCODES: true,
    authOptional: true,
    disabledCommands: options.starttls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    onConnect(_session, callback) {
      sessions++;
      open++;
      maxConcurrent = Math.max(maxConcurrent, open);
      later(() =>
        callback(
          options.refuseConnections ? smtpError(554, '5.7.1 Service unavailable; client host blocked using zen.spamhaus.org') : undefined,
        ),
      );
    },
    onClose() {
      open--;
    },
    onMailFrom(_address, _session, callback) {
      later(() => callback());
    },
    onRcptTo(address, session, callback) {
      const target = address.address;
      recipients.push(target);
      const at = target.lastIndexOf('@');
      const local = target.slice(0, at);
      const domain = target.slice(at + 1).toLowerCase();
      const behaviour = domains[domain];
      later(() => {
        if (!behaviour) return callback(smtpError(550, '5.7.1 Relaying denied'));
        if (behaviour.blockAtMailFrom) return callback(smtpError(550, '5.7.1 Sender blocked by policy'));
        const seen = greylisted.get(target) ?? 0;
        if (seen < (behaviour.greylistTimes ?? 0)) {
          greylisted.set(target, seen + 1);
          return callback(smtpError(451, '4.7.1 Greylisted, please try again later'));
        }
        const state = behaviour.mailboxes?.[local] ?? (behaviour.catchAll ? 'exists' : 'unknown');
        if (state === 'exists') return callback();
        if (state === 'disabled') return callback(smtpError(550, '5.2.1 Mailbox disabled, not accepting messages'));
        if (state === 'full') return callback(smtpError(552, '5.2.2 Mailbox full'));
        void session;
        return callback(smtpError(550, '5.1.1 No such user here'));
      });
    },
    onData(stream, _session, callback) {
      data++;
      stream.resume();
      stream.on('end', () => callback(smtpError(554, '5.6.0 Not taking mail in tests')));
    },
  };
  // MAIL FROM block is decided at MAIL FROM, not RCPT: find whether any domain asks for it.
  if (Object.values(domains).some((d) => d.blockAtMailFrom)) {
    config.onMailFrom = (_address, _session, callback) => later(() => callback(smtpError(550, '5.7.1 Sender blocked by policy')));
  }
  const server = new SMTPServer(config);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  server.on('error', () => {});
  return {
    port: (server.server.address() as AddressInfo).port,
    sessions: () => sessions,
    maxConcurrent: () => maxConcurrent,
    recipients: () => [...recipients],
    dataCommands: () => data,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
