import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { ATTEMPT_TIMEOUT_MS } from '#shared/webhooks/timing';
import type { UrlCheck } from '#shared/webhooks/url-guard';

export interface PostResult {
  statusCode: number | null;
  error: string | null;
}

/** Longest response body read (then dropped): receivers answer with anything, we only need the status. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * One POST to the address the guard checked (the connection never resolves
 * the name again), with a hard deadline for the whole exchange. Redirects
 * are not followed: a 3xx is a failure, like any other non-2xx.
 */
export async function postJson(
  target: Extract<UrlCheck, { ok: true }>,
  headers: Record<string, string>,
  body: string,
): Promise<PostResult> {
  const pinned: LookupFunction = (_host, options, callback) => {
    if ((options as { all?: boolean }).all)
      (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
  // Plain http is for loopback receivers of local runs only. Imported statically, node:http's module namespace would load
  // Node's bundled undici (its WebSocket getter) at every cold start: a third of this function's import time on Node 24.
  const client = target.url.protocol === 'https:' ? https : (await import('node:http')).default;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: PostResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const request = client.request(
      target.url,
      {
        method: 'POST',
        lookup: pinned,
        headers: { 'content-type': 'application/json', 'user-agent': 'webhooks/1', ...headers, 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) response.destroy();
        });
        const done = () => finish({ statusCode: response.statusCode ?? null, error: null });
        response.on('end', done);
        response.on('close', done);
        response.on('error', done);
      },
    );
    const timer = setTimeout(() => {
      finish({ statusCode: null, error: `no answer within ${ATTEMPT_TIMEOUT_MS / 1000} s` });
      request.destroy();
    }, ATTEMPT_TIMEOUT_MS);
    request.on('error', (error) => finish({ statusCode: null, error: error.message }));
    request.end(body);
  });
}
