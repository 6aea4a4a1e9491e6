import net from 'node:net';
import { commonJsExports } from '#shared/util/commonjs';

/**
 * The SMTP probe (SMTP_PROBE=tcp): does a mail host accept a TCP connection on
 * the SMTP port and greet with `220` in time? It reads the greeting only, then
 * says `QUIT` and hangs up: no EHLO, no RCPT, nothing a server could mistake
 * for a delivery attempt or a mailbox-harvesting scan.
 *
 * It connects to addresses the caller has already vetted (address-policy.ts)
 * instead of the host name, so a second DNS answer cannot redirect it
 * (DNS rebinding). Through SMTP_PROXY the same vetted address is handed to a
 * SOCKS5 proxy, for deployments whose own egress on port 25 is blocked;
 * only those load the SOCKS client, at their first probe.
 */
export interface ProbeOptions {
  port: number;
  /** Budget for the whole host: every address tried shares it. */
  timeoutMs: number;
  proxy: { host: string; port: number } | undefined;
}

/** Longest greeting line accepted; a real banner is well below this. */
const MAX_GREETING_BYTES = 1024;
/** After QUIT, how long the connection may linger before it is cut. */
const QUIT_GRACE_MS = 1000;

/** True when one of the addresses greets with 220 within the budget; tries them in order. */
export async function probeSmtpHost(addresses: string[], options: ProbeOptions): Promise<boolean> {
  const deadline = Date.now() + options.timeoutMs;
  for (const address of addresses) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) return false;
    if (await greetsWith220(address, options.port, remaining, options.proxy)) return true;
  }
  return false;
}

async function greetsWith220(address: string, port: number, timeoutMs: number, proxy: ProbeOptions['proxy']): Promise<boolean> {
  const startedAt = Date.now();
  let socket: net.Socket;
  try {
    socket = await connectSmtp({ address, port, proxy }, timeoutMs);
  } catch {
    return false; // refused, timed out, or the proxy could not reach the host
  }
  return readGreeting(socket, Math.max(1, timeoutMs - (Date.now() - startedAt)));
}

export interface SmtpTarget {
  /** A vetted address (address-policy.ts): never a name a second DNS answer could redirect. */
  address: string;
  port: number;
  proxy: { host: string; port: number } | undefined;
}

/**
 * A TCP connection to the SMTP port of a vetted address, directly or through
 * the SOCKS5 proxy, within the timeout; rejects with the reason. Shared by
 * this probe and the mailbox probe's dialog (smtp-dialog.ts), which receives
 * it as a parameter so that its lazily loaded chunk shares no module with
 * the functions' init code.
 */
export async function connectSmtp(target: SmtpTarget, timeoutMs: number): Promise<net.Socket> {
  if (target.proxy) {
    const { SocksClient } = commonJsExports(await import('socks'), 'SocksClient');
    try {
      const connection = await SocksClient.createConnection({
        proxy: { host: target.proxy.host, port: target.proxy.port, type: 5 },
        command: 'connect',
        destination: { host: target.address, port: target.port },
        timeout: timeoutMs,
      });
      return connection.socket;
    } catch (error) {
      throw new Error(`proxy could not connect: ${(error as Error).message}`, { cause: error });
    }
  }
  return new Promise<net.Socket>((resolve, reject) => {
    const socket = net.connect({ host: target.address, port: target.port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no connection within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeAllListeners('error');
      resolve(socket);
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`connection failed: ${error.message}`));
    });
  });
}

function readGreeting(socket: net.Socket, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    let received = '';
    let settled = false;
    const finish = (greeted: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.removeAllListeners('data');
      if (greeted) {
        // Polite goodbye; do not wait for the 221.
        socket.on('error', () => {});
        socket.end('QUIT\r\n');
        setTimeout(() => socket.destroy(), QUIT_GRACE_MS).unref();
      } else {
        socket.destroy();
      }
      resolve(greeted);
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.setNoDelay(true);
    socket.on('error', () => finish(false));
    socket.on('close', () => finish(false));
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      const newline = received.indexOf('\n');
      if (newline !== -1) finish(received.startsWith('220'));
      else if (received.length > MAX_GREETING_BYTES) finish(false);
    });
  });
}
