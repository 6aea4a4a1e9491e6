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
  if (proxy) {
    const { SocksClient } = commonJsExports(await import('socks'), 'SocksClient');
    try {
      const connection = await SocksClient.createConnection({
        proxy: { host: proxy.host, port: proxy.port, type: 5 },
        command: 'connect',
        destination: { host: address, port },
        timeout: timeoutMs,
      });
      socket = connection.socket;
    } catch {
      return false; // proxy unreachable, or it could not reach the host
    }
  } else {
    socket = net.connect({ host: address, port });
  }
  return readGreeting(socket, Math.max(1, timeoutMs - (Date.now() - startedAt)));
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
