import net from 'node:net';

/**
 * A minimal SOCKS5 proxy (RFC 1928: no authentication, CONNECT only) on
 * loopback, recording where it was asked to connect. Enough to show the SMTP
 * probe goes through SMTP_PROXY with the address it vetted.
 */
export interface SocksProxy {
  host: string;
  port: number;
  /** `socks5://127.0.0.1:PORT`, the form SMTP_PROXY takes. */
  url: string;
  destinations(): { host: string; port: number }[];
  stop(): Promise<void>;
}

export async function startSocksProxy(): Promise<SocksProxy> {
  const destinations: { host: string; port: number }[] = [];
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
  };

  const server = net.createServer((client) => {
    track(client);
    let buffer = Buffer.alloc(0);
    let stage: 'greeting' | 'request' | 'piping' = 'greeting';

    const onData = (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (stage === 'greeting') {
        // VER NMETHODS METHODS...
        if (buffer.length < 2 || buffer.length < 2 + buffer[1]!) return;
        if (buffer[0] !== 5) return client.destroy();
        const methods = buffer.subarray(2, 2 + buffer[1]!);
        buffer = buffer.subarray(2 + buffer[1]!);
        if (!methods.includes(0)) return client.end(Buffer.from([5, 0xff]));
        client.write(Buffer.from([5, 0])); // no authentication
        stage = 'request';
      }
      if (stage === 'request') {
        // VER CMD RSV ATYP DST.ADDR DST.PORT
        if (buffer.length < 5) return;
        const atyp = buffer[3];
        const addressLength = atyp === 1 ? 4 : atyp === 4 ? 16 : atyp === 3 ? 1 + buffer[4]! : -1;
        if (addressLength < 0 || buffer[1] !== 1) return client.end(Buffer.from([5, 7, 0, 1, 0, 0, 0, 0, 0, 0]));
        if (buffer.length < 4 + addressLength + 2) return;
        const raw = buffer.subarray(4, 4 + addressLength);
        const host =
          atyp === 1
            ? Array.from(raw).join('.')
            : atyp === 3
              ? raw.subarray(1).toString('latin1')
              : Array.from({ length: 8 }, (_, i) => raw.readUInt16BE(i * 2).toString(16)).join(':');
        const port = buffer.readUInt16BE(4 + addressLength);
        const rest = buffer.subarray(4 + addressLength + 2);
        destinations.push({ host, port });
        stage = 'piping';
        client.off('data', onData);

        const upstream = net.connect({ host, port });
        track(upstream);
        upstream.once('connect', () => {
          client.write(Buffer.from([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]));
          if (rest.length) upstream.write(rest);
          client.pipe(upstream);
          upstream.pipe(client);
        });
        upstream.once('error', () => {
          // 5 = connection refused; 1 = general failure
          if (!client.destroyed) client.end(Buffer.from([5, 5, 0, 1, 0, 0, 0, 0, 0, 0]));
        });
        upstream.once('close', () => client.destroy());
        client.once('close', () => upstream.destroy());
      }
    };
    client.on('data', onData);
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as net.AddressInfo;
  return {
    host: '127.0.0.1',
    port,
    url: `socks5://127.0.0.1:${port}`,
    destinations: () => [...destinations],
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
