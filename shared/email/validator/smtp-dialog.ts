import net from 'node:net';
import type tls from 'node:tls';

/**
 * The client half of an SMTP dialog (RFC 5321), just what the mailbox probe
 * needs: read the greeting, send one command at a time, read its (possibly
 * multi-line) reply, upgrade with STARTTLS, say QUIT. It never sends DATA:
 * `command` refuses it, so no code path can turn a probe into a delivery.
 *
 * Hand-written rather than a mail library: the libraries (nodemailer's
 * SMTPConnection and the like) are built to deliver a message and hide the
 * per-recipient answers behind `send`; the probe needs each RCPT reply, its
 * enhanced status code, and several envelopes in one session.
 */
export interface SmtpReply {
  code: number;
  /** The enhanced status code (RFC 3463) of the first line, `5.1.1`; undefined when the server gives none. */
  enhanced: string | undefined;
  /** Every line's text, joined with a space, codes removed. */
  text: string;
}

export class SmtpDialogError extends Error {
  override name = 'SmtpDialogError';
}

/**
 * The server sent more than a cap allows: the dialog hangs up, and asking
 * the host again would only cost the same, so callers record `unknown`
 * rather than retry.
 */
export class SmtpLimitError extends SmtpDialogError {
  override name = 'SmtpLimitError';
}

/**
 * The caps on what a server may send (a real reply, even an EHLO list, is a
 * few hundred bytes in a dozen lines; RFC 5321 keeps a reply line to 512
 * octets). Anyone can point their domain's MX at a host that never ends a
 * reply, so every byte read counts against them, finished lines included.
 */
export const MAX_REPLY_BYTES = 16 * 1024;
export const MAX_REPLY_LINES = 100;
/** All replies of one session (200 RCPT answers and the rest stay far below). */
export const MAX_SESSION_BYTES = 256 * 1024;
/** What the reply's text keeps for logs and verdicts: enough for any real answer. */
const MAX_TEXT_CHARS = 2048;
/** After QUIT, how long the connection may linger before it is cut. */
const QUIT_GRACE_MS = 1000;

const CODE = /^\d{3}(?:[ -]|$)/;
const CONTINUATION = /^\d{3}-/;
const ENHANCED = /^([245]\.\d{1,3}\.\d{1,3})(?:\s|$)/;

/** A reply's lines (at most the caps above) as code, enhanced code and text; linear in their length. */
export function parseReply(lines: string[]): SmtpReply {
  const first = lines[0];
  if (first === undefined || !CODE.test(first)) throw new SmtpDialogError(`not an SMTP reply: ${first?.slice(0, 80)}`);
  const texts = lines.map((line) => (CODE.test(line) ? line.slice(4) : line).trim());
  const enhanced = ENHANCED.exec(texts[0]!)?.[1];
  const text = texts
    .map((t) => (enhanced && t.startsWith(enhanced) ? t.slice(enhanced.length).trim() : t))
    .join(' ')
    .slice(0, MAX_TEXT_CHARS);
  return { code: Number(first.slice(0, 3)), enhanced, text };
}

/** Opens the TCP connection (smtp-probe.ts's connectSmtp, handed in: see there why). */
export type Connect = (target: DialogTarget, timeoutMs: number) => Promise<net.Socket>;

export interface DialogTarget {
  /** A vetted address (address-policy.ts): never a name a second DNS answer could redirect. */
  address: string;
  port: number;
  proxy: { host: string; port: number } | undefined;
}

export class SmtpDialog {
  /** The unfinished line. */
  private partial = '';
  /** The finished lines of the reply being read, and their bytes with line ends. */
  private lines: string[] = [];
  private replyBytes = 0;
  private sessionBytes = 0;
  private waiting: { resolve: (reply: SmtpReply) => void; reject: (error: Error) => void } | undefined;
  private failure: Error | undefined;
  private closed = false;

  private constructor(
    private socket: net.Socket,
    private readonly timeoutMs: number,
  ) {
    this.attach(socket);
  }

  /** Connects (directly or through the SOCKS5 proxy) and reads the greeting. */
  static async open(connect: Connect, target: DialogTarget, timeoutMs: number): Promise<{ dialog: SmtpDialog; greeting: SmtpReply }> {
    const socket = await connect(target, timeoutMs);
    const dialog = new SmtpDialog(socket, timeoutMs);
    try {
      return { dialog, greeting: await dialog.reply() };
    } catch (error) {
      dialog.destroy();
      throw error;
    }
  }

  /** Sends one command line and waits for its reply (at most the timeout). */
  async command(line: string): Promise<SmtpReply> {
    if (/^\s*(DATA|BDAT)\b/i.test(line)) throw new SmtpDialogError('the probe never sends a message');
    if (/[\r\n]/.test(line)) throw new SmtpDialogError('a command is one line');
    if (this.failure) throw this.failure;
    this.socket.write(`${line}\r\n`);
    return this.reply();
  }

  /**
   * STARTTLS then a fresh EHLO (RFC 3207). The certificate is not checked:
   * MX hosts rarely carry one for their MX name, and the probe sends nothing
   * secret; TLS only keeps the addresses asked about off the wire.
   */
  async startTls(servername: string): Promise<boolean> {
    const answer = await this.command('STARTTLS');
    if (answer.code !== 220) return false;
    // Loaded here: only `rcpt` sessions with STARTTLS need it, not a cold start.
    const { connect: connectTls } = await import('node:tls');
    const plain = this.socket;
    plain.removeAllListeners('data');
    const secure = await new Promise<tls.TLSSocket>((resolve, reject) => {
      const s = connectTls({ socket: plain, servername: net.isIP(servername) ? undefined : servername, rejectUnauthorized: false });
      const timer = setTimeout(() => reject(new SmtpDialogError('TLS handshake timed out')), this.timeoutMs);
      s.once('secureConnect', () => {
        clearTimeout(timer);
        resolve(s);
      });
      s.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
    this.socket = secure;
    this.partial = '';
    this.lines = [];
    this.replyBytes = 0;
    this.attach(secure);
    return true;
  }

  /** Polite goodbye without waiting for the 221. */
  quit(): void {
    if (this.closed) return;
    this.closed = true;
    if (!this.failure) {
      this.socket.end('QUIT\r\n');
      setTimeout(() => this.socket.destroy(), QUIT_GRACE_MS).unref();
    } else {
      this.socket.destroy();
    }
  }

  destroy(): void {
    this.closed = true;
    this.socket.destroy();
  }

  private attach(socket: net.Socket): void {
    socket.setNoDelay(true);
    socket.on('error', (error) => this.fail(new SmtpDialogError(`connection failed: ${error.message}`)));
    socket.on('close', () => this.fail(new SmtpDialogError('connection closed by the server')));
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
  }

  /**
   * One read (at most 64 KiB) in one pass, linear in its length: nothing
   * here revisits earlier bytes, so a host flooding the dialog costs the
   * process a bounded step per read, and other requests run between reads.
   * Past a cap the connection is dropped at once.
   */
  private receive(chunk: Buffer): void {
    this.sessionBytes += chunk.length;
    if (this.sessionBytes > MAX_SESSION_BYTES) return this.overLimit(`the server sent more than ${MAX_SESSION_BYTES} bytes in one session`);
    const text = chunk.toString('latin1');
    let start = 0;
    for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n', start)) {
      const raw = this.partial + text.slice(start, newline);
      this.replyBytes += newline + 1 - start;
      this.partial = '';
      start = newline + 1;
      if (this.replyBytes > MAX_REPLY_BYTES) return this.overLimit(`reply longer than ${MAX_REPLY_BYTES} bytes`);
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      this.lines.push(line);
      if (this.lines.length > MAX_REPLY_LINES) return this.overLimit(`reply longer than ${MAX_REPLY_LINES} lines`);
      // The last line of a reply has a space (or nothing) after the code.
      if (!CONTINUATION.test(line)) this.finishReply();
    }
    this.partial += text.slice(start);
    this.replyBytes += text.length - start;
    if (this.replyBytes > MAX_REPLY_BYTES) this.overLimit(`reply longer than ${MAX_REPLY_BYTES} bytes`);
  }

  private finishReply(): void {
    const lines = this.lines;
    this.lines = [];
    this.replyBytes = 0;
    const waiting = this.waiting;
    this.waiting = undefined;
    try {
      waiting?.resolve(parseReply(lines));
    } catch (error) {
      waiting?.reject(error as Error);
    }
  }

  private overLimit(reason: string): void {
    this.fail(new SmtpLimitError(`${reason}: dropped the connection`));
    this.lines = [];
    this.partial = '';
    this.destroy();
  }

  private fail(error: Error): void {
    this.failure ??= error;
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.reject(this.failure);
  }

  private reply(): Promise<SmtpReply> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<SmtpReply>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.fail(new SmtpDialogError(`no reply within ${this.timeoutMs} ms`));
        this.socket.destroy();
      }, this.timeoutMs);
      this.waiting = {
        resolve: (reply) => {
          clearTimeout(timer);
          resolve(reply);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
    });
  }
}
