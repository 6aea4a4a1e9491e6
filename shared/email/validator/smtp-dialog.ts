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

/** Longest reply accepted (all lines); a real one, even an EHLO list, is well below this. */
const MAX_REPLY_BYTES = 16 * 1024;
/** After QUIT, how long the connection may linger before it is cut. */
const QUIT_GRACE_MS = 1000;

const LINE = /^(\d{3})([ -])(.*)$/;
const ENHANCED = /^([245]\.\d{1,3}\.\d{1,3})(?:\s|$)/;

export function parseReply(lines: string[]): SmtpReply {
  const codes = lines.map((line) => LINE.exec(line));
  const first = codes[0];
  if (!first) throw new SmtpDialogError(`not an SMTP reply: ${lines[0]?.slice(0, 80)}`);
  const texts = codes.map((m, i) => (m ? m[3]! : lines[i]!).trim());
  const enhanced = ENHANCED.exec(texts[0]!)?.[1];
  const text = texts.map((t) => (enhanced && t.startsWith(enhanced) ? t.slice(enhanced.length).trim() : t)).join(' ');
  return { code: Number(first[1]), enhanced, text };
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
  private buffer = '';
  private lines: string[] = [];
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
    this.buffer = '';
    this.lines = [];
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
    socket.on('data', (chunk: Buffer) => this.receive(chunk.toString('latin1')));
  }

  private receive(text: string): void {
    this.buffer += text;
    if (this.buffer.length > MAX_REPLY_BYTES) return this.fail(new SmtpDialogError('reply too long'));
    let newline: number;
    while ((newline = this.buffer.indexOf('\n')) !== -1) {
      const line = this.buffer.slice(0, newline).replace(/\r$/, '');
      this.buffer = this.buffer.slice(newline + 1);
      this.lines.push(line);
      // The last line of a reply has a space (or nothing) after the code.
      if (!/^\d{3}-/.test(line)) {
        const lines = this.lines;
        this.lines = [];
        const waiting = this.waiting;
        this.waiting = undefined;
        try {
          waiting?.resolve(parseReply(lines));
        } catch (error) {
          waiting?.reject(error as Error);
        }
      }
    }
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
