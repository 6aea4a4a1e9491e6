import net from 'node:net';

/**
 * SMTP-ish listeners on loopback for the connectability probe. They speak
 * just enough SMTP to be told apart: one greets, one never does, and a port
 * where nobody listens refuses.
 */
export interface SmtpListener {
  host: string;
  port: number;
  /** Connections accepted so far. */
  connections(): number;
  /** Connections that said QUIT after the greeting. */
  quits(): number;
  stop(): Promise<void>;
}

export type SmtpBehaviour = 'answering' | 'silent';

/**
 * `answering` greets with `220 ... ready` and answers QUIT with 221;
 * `silent` accepts the connection and never says a word.
 * `port` 0 picks a free port; a fixed port lets two hosts share one SMTP_PORT.
 */
export async function startSmtpServer(behaviour: SmtpBehaviour, host = '127.0.0.1', port = 0): Promise<SmtpListener> {
  let connections = 0;
  let quits = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    if (behaviour === 'silent') return;
    socket.write('220 test.local ESMTP ready\r\n');
    let buffered = '';
    socket.on('data', (chunk) => {
      buffered += chunk.toString('latin1');
      let newline: number;
      while ((newline = buffered.indexOf('\n')) !== -1) {
        const line = buffered.slice(0, newline).trim().toUpperCase();
        buffered = buffered.slice(newline + 1);
        if (line === 'QUIT') {
          quits++;
          socket.end('221 bye\r\n');
        } else {
          socket.write('502 not implemented\r\n');
        }
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    host,
    port: (server.address() as net.AddressInfo).port,
    connections: () => connections,
    quits: () => quits,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A loopback port nobody listens on: bound to learn a free number, then closed. */
export async function refusedPort(host = '127.0.0.1'): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, host, () => resolve()));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Two listeners on the same port at different loopback addresses (Linux
 * routes all of 127.0.0.0/8 to lo), because the probe uses one SMTP_PORT for
 * every MX host. Retries when the second address happens to have the port taken.
 */
export async function startSmtpPair(first: SmtpBehaviour, second: SmtpBehaviour): Promise<[SmtpListener, SmtpListener]> {
  for (let attempt = 0; ; attempt++) {
    const a = await startSmtpServer(first, '127.0.0.1');
    try {
      const b = await startSmtpServer(second, '127.0.0.2', a.port);
      return [a, b];
    } catch (error) {
      await a.stop();
      if (attempt >= 5) throw error;
    }
  }
}
