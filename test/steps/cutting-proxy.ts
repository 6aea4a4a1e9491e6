import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CuttingProxy {
  url: string;
  /** The Range header of every GET that asked for one, in order. */
  ranges: string[];
  /** How many answers were cut short (the body reached `afterBytes` before it ended). */
  cut: number;
  stop(): Promise<void>;
}

/**
 * A loopback hop in front of an HTTP server that passes everything through
 * (the Host header included, so presigned signatures still match), except
 * that the first ranged GET's answer is cut after `afterBytes` of its body
 * by closing the connection: a storage read that loses its connection
 * mid-file.
 */
export async function cuttingProxy(target: URL, afterBytes: number): Promise<CuttingProxy> {
  const state = { ranges: [] as string[], cut: 0, chosen: false };
  const server = http.createServer((req, res) => {
    const range = req.method === 'GET' ? req.headers.range : undefined;
    if (range) state.ranges.push(range);
    const cutThis = range !== undefined && !state.chosen;
    if (cutThis) state.chosen = true;
    const upstream = http.request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        let sent = 0;
        answer.on('data', (chunk: Buffer) => {
          if (!cutThis) return void res.write(chunk);
          const room = afterBytes - sent;
          sent += chunk.length;
          if (room <= 0) return;
          if (sent < afterBytes) return void res.write(chunk);
          // The last bytes reach the client before the connection goes.
          answer.destroy();
          state.cut++;
          res.write(chunk.subarray(0, room), () => res.socket?.destroy());
        });
        answer.on('end', () => res.end());
      },
    );
    upstream.on('error', () => res.socket?.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get ranges() {
      return state.ranges;
    },
    get cut() {
      return state.cut;
    },
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
