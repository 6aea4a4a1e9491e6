import net from 'node:net';

/**
 * A hostile mail host on loopback: it speaks SMTP until one step of the
 * dialog, then answers that step with 15,000-character continuation lines
 * (`220-aaaa…`, `250-aaaa…`) for as long as the client reads, never ending
 * the reply. Lines go out one at a time, a couple of ms apart, and only
 * while the socket drains, so what it counts as written is what the
 * client's side took off the wire, give or take the kernel's socket buffers.
 */
export type FloodStep = 'greeting' | 'ehlo' | 'rcpt';

export interface HostileSmtpServer {
  port: number;
  /** Bytes of flood handed to the sockets so far, all connections. */
  floodBytes(): number;
  /** Connections accepted so far. */
  connections(): number;
  /** Resolves when a flood has begun on some connection. */
  flooding: Promise<void>;
  /** Resolves when every connection accepted so far has been closed, by either side. */
  allClosed(): Promise<void>;
  stop(): Promise<void>;
}

/** The server gives up by itself past this much, so a client without a cap cannot hold a test forever. */
const SERVER_LIMIT_BYTES = 64 * 1024 * 1024;
const PACE_MS = 2;

/** `lines`: end the reply after this many continuation lines (a last `250 ok`) instead of never. */
export async function startHostileSmtpServer(step: FloodStep, lines = Number.POSITIVE_INFINITY): Promise<HostileSmtpServer> {
  let written = 0;
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const closed: Promise<void>[] = [];
  let began: () => void = () => {};
  const flooding = new Promise<void>((resolve) => (began = resolve));

  const flood = (socket: net.Socket, code: number) => {
    const line = `${code}-${'a'.repeat(15_000)}\r\n`;
    let sent = 0;
    began();
    // One line at a time, a couple of ms apart, so each arrives on its own as from a slow remote host.
    const pump = () => {
      if (socket.destroyed) return;
      if (written >= SERVER_LIMIT_BYTES) return void socket.destroy();
      if (sent++ >= lines) return void socket.write(`${code} ok\r\n`);
      written += line.length;
      if (socket.write(line)) setTimeout(pump, PACE_MS);
      // else: resumes on 'drain', once the client has read
    };
    socket.on('drain', () => setTimeout(pump, PACE_MS));
    pump();
  };

  const server = net.createServer((socket) => {
    connections++;
    sockets.add(socket);
    closed.push(new Promise((resolve) => socket.once('close', () => resolve())));
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    socket.setNoDelay(true);
    if (step === 'greeting') flood(socket, 220);
    else socket.write('220 hostile.test ESMTP\r\n');
    let buffered = '';
    socket.on('data', (chunk) => {
      buffered += chunk.toString('latin1');
      let newline: number;
      while ((newline = buffered.indexOf('\n')) !== -1) {
        const verb = buffered.slice(0, newline).trim().split(/[\s:]/)[0]!.toUpperCase();
        buffered = buffered.slice(newline + 1);
        if (verb === 'EHLO' && step === 'ehlo') flood(socket, 250);
        else if (verb === 'RCPT' && step === 'rcpt') flood(socket, 250);
        else if (verb === 'QUIT') socket.end('221 bye\r\n');
        else socket.write('250 ok\r\n');
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    floodBytes: () => written,
    connections: () => connections,
    flooding,
    allClosed: async () => {
      await Promise.all(closed);
    },
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
