import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import http, { type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { pipeline } from 'node:stream';
import { SigV4Check, type Refusal, type S3Credentials } from './sigv4-check.ts';

const require = createRequire(import.meta.url);

interface S3rverOptions {
  address: string;
  port: number;
  silent: boolean;
  directory: string;
  configureBuckets: { name: string; configs: string[] }[];
}
interface S3rver {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  httpServer?: http.Server;
}
// s3rver is CommonJS without types: the slice used here, typed.
const S3rver = require('s3rver') as new (options: S3rverOptions) => S3rver;
const s3rverAccounts = require('s3rver/lib/models/account') as { DUMMY_ACCOUNT: { createKeyPair(id: string, secret: string): void } };

export interface S3ServerOptions {
  /** Loopback port of the signature-checking front; 0 takes a free one. */
  port: number;
  /** Where s3rver keeps buckets and objects (kept across restarts). */
  dataDir: string;
  /** Created (or kept) at start. */
  bucket: string;
  /** The one key pair requests must be signed with. */
  credentials: S3Credentials;
  /** Browser origins allowed to PUT, GET and HEAD objects (the bucket's CORS rule); empty: none. */
  corsOrigins: readonly string[];
  /** The region signatures must name (default us-east-1). */
  region?: string;
}

export interface RunningS3Server {
  /** `http://127.0.0.1:<port>`, path-style: `<endpoint>/<bucket>/<key>`. */
  endpoint: string;
  stop(): Promise<void>;
}

// Bounds on what is read before a request is checked: S3's own limits are of this order.
const MAX_URL_LENGTH = 8 * 1024;
const MAX_HEADER_BYTES = 16 * 1024;
const MAX_HEADER_COUNT = 100;

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * An S3-compatible server on loopback that checks signatures as S3 does.
 * s3rver stores the objects and speaks S3's REST API, but lets any SigV4
 * request through unchecked (its own check covers only the older V2
 * signatures); so it listens on an internal port and this front, the only
 * address given out, verifies every request's signature first (sigv4-check.ts)
 * and refuses with S3's errors what S3 would refuse. What passes is proxied
 * as it came, body streamed untouched. CORS preflights pass unchecked, as on
 * S3, where browsers send them without credentials.
 */
export async function startS3Server(options: S3ServerOptions): Promise<RunningS3Server> {
  mkdirSync(options.dataDir, { recursive: true });
  // s3rver rejects keys it does not know before its (V4-blind) check; what reaches it was verified here.
  s3rverAccounts.DUMMY_ACCOUNT.createKeyPair(options.credentials.accessKeyId, options.credentials.secretAccessKey);
  const storage = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: options.dataDir,
    configureBuckets: [{ name: options.bucket, configs: options.corsOrigins.length ? [corsConfiguration(options.corsOrigins)] : [] }],
  });
  const { port: storagePort } = await storage.run();
  const stopStorage = async () => {
    storage.httpServer?.closeAllConnections();
    await storage.close();
  };
  const agent = new http.Agent({ keepAlive: true });
  const check = new SigV4Check([options.credentials], options.region ?? 'us-east-1');

  const front = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => {
    void handle(req, res).catch((error: Error) => {
      if (!res.headersSent) sendError(req, res, { status: 500, code: 'InternalError', message: error.message }, options.corsOrigins);
      else res.destroy(error);
    });
  });
  front.maxHeadersCount = MAX_HEADER_COUNT;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if ((req.url ?? '').length > MAX_URL_LENGTH) {
      return sendError(req, res, { status: 400, code: 'InvalidURI', message: "Couldn't parse the specified URI." }, options.corsOrigins);
    }
    if (req.method !== 'OPTIONS') {
      const refusal = await check.check({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headersDistinct });
      if (refusal) return sendError(req, res, refusal, options.corsOrigins);
    }
    const message = 'At least one of the pre-conditions you specified did not hold';
    // S3's conditional write, which s3rver lacks: a PUT with `If-None-Match: *` is refused once the object exists.
    if (req.method === 'PUT' && req.headers['if-none-match']?.trim() === '*' && (await objectEtag(req.url ?? '/')) !== undefined) {
      return sendError(req, res, { status: 412, code: 'PreconditionFailed', message }, options.corsOrigins);
    }
    // And its conditional read, which s3rver ignores: a GET or HEAD with `If-Match` of another version than the object's
    // is refused, so a reader that resumes a file by its ETag (a CSV import) finds out that the file was replaced.
    const ifMatch = req.headers['if-match']?.trim();
    if ((req.method === 'GET' || req.method === 'HEAD') && ifMatch && isObjectPath(req.url ?? '/')) {
      const etag = await objectEtag(req.url ?? '/');
      if (etag !== undefined && ifMatch !== '*' && !ifMatch.split(',').some((tag) => tag.trim() === etag)) {
        return sendError(req, res, { status: 412, code: 'PreconditionFailed', message }, options.corsOrigins);
      }
    }
    proxy(req, res);
  }

  /** The object's ETag (quoted, as S3 gives it), or undefined when it is not there. */
  function objectEtag(url: string): Promise<string | undefined> {
    const objectPath = new URL(url, 'http://storage').pathname;
    return new Promise((resolve, reject) => {
      const head = http.request({ host: '127.0.0.1', port: storagePort, method: 'HEAD', path: objectPath, agent }, (answer) => {
        answer.resume();
        resolve(answer.statusCode === 200 ? String(answer.headers.etag ?? '') : undefined);
      });
      head.on('error', reject);
      head.end();
    });
  }

  function proxy(req: IncomingMessage, res: ServerResponse): void {
    const upstream = http.request(
      { host: '127.0.0.1', port: storagePort, method: req.method, path: req.url, headers: endToEnd(req.headers), agent },
      (answer) => {
        // S3 answers a missing key with 403, not 404, to a signer without s3:ListBucket, which no function of the stack
        // has (infra/functions.ts): the same answer here, so code that reads it behaves locally as it will on AWS.
        if (answer.statusCode === 404 && (req.method === 'GET' || req.method === 'HEAD') && isObjectPath(req.url ?? '/')) {
          answer.resume();
          return sendError(req, res, { status: 403, code: 'AccessDenied', message: 'Access Denied' }, options.corsOrigins);
        }
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEnd(answer.headers));
        pipeline(answer, res, () => undefined);
      },
    );
    upstream.on('error', (error) => {
      if (!res.headersSent) sendError(req, res, { status: 503, code: 'ServiceUnavailable', message: error.message }, options.corsOrigins);
      else res.destroy();
    });
    pipeline(req, upstream, () => undefined);
  }

  try {
    await new Promise<void>((resolve, reject) => {
      front.once('error', reject);
      front.listen(options.port, '127.0.0.1', () => resolve());
    });
  } catch (error) {
    // The port taken (EADDRINUSE, with its number): nothing left running.
    await stopStorage();
    throw error;
  }
  const { port } = front.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: async () => {
      front.closeAllConnections();
      await new Promise<void>((resolve) => front.close(() => resolve()));
      agent.destroy();
      await stopStorage();
    },
  };
}

/** `/<bucket>/<key...>`, not the bucket itself. */
const isObjectPath = (url: string) => /^\/[^/?]+\/[^?]/.test(url);

/** The headers of one hop, without those that belong to the connection (RFC 9110, 7.6.1). */
function endToEnd(headers: http.IncomingHttpHeaders): OutgoingHttpHeaders {
  const named = new Set(
    String(headers.connection ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase()),
  );
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    // Expect: 100-continue was answered by this server already.
    if (value !== undefined && !HOP_BY_HOP.has(name) && !named.has(name) && name !== 'expect') out[name] = value;
  }
  return out;
}

/** S3's error document; an allowed origin may read it (a browser shows the reason, not a network error). */
function sendError(req: IncomingMessage, res: ServerResponse, refusal: Refusal, corsOrigins: readonly string[]): void {
  // Whatever body came is read and dropped, so the client gets the answer instead of a reset while it is still sending.
  req.resume();
  const requestId = randomBytes(8).toString('hex').toUpperCase();
  const body =
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<Error><Code>${refusal.code}</Code><Message>${escapeXml(refusal.message)}</Message><RequestId>${requestId}</RequestId></Error>`;
  const origin = req.headers.origin;
  res.writeHead(refusal.status, {
    'content-type': 'application/xml',
    'content-length': Buffer.byteLength(body),
    'x-amz-request-id': requestId,
    ...(corsOrigins.includes('*')
      ? { 'access-control-allow-origin': '*' }
      : origin && corsOrigins.includes(origin)
        ? { 'access-control-allow-origin': origin, vary: 'Origin' }
        : {}),
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

const escapeXml = (s: string) => s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The bucket's CORS rule, as the stack's: the allowed origins may PUT, GET and HEAD objects and read their ETag. */
function corsConfiguration(origins: readonly string[]): string {
  return (
    '<CORSConfiguration><CORSRule>' +
    origins.map((o) => `<AllowedOrigin>${escapeXml(o)}</AllowedOrigin>`).join('') +
    '<AllowedMethod>PUT</AllowedMethod><AllowedMethod>GET</AllowedMethod><AllowedMethod>HEAD</AllowedMethod>' +
    '<AllowedHeader>*</AllowedHeader><ExposeHeader>ETag</ExposeHeader><MaxAgeSeconds>3000</MaxAgeSeconds>' +
    '</CORSRule></CORSConfiguration>'
  );
}
