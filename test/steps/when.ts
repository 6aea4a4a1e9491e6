import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { ApiName } from '#shared/routes';
import { dispatch } from '../../scripts/local/api-gateway.ts';
import { startApiServer, type RunningApi } from '../../scripts/local/http-server.ts';
import type { Invoker } from '../../scripts/local/lambda.ts';
import { assertMatchesOpenApi } from './openapi.ts';

/**
 * The same cases run three ways: in-process through the API Gateway
 * emulation (`handler`), over real sockets against the local server (`http`),
 * or against a deployed stack when MESSAGING_BASE_URL is set (`remote`).
 */
export type Transport = 'handler' | 'http' | 'remote';

/** A deployed stack's base URL for the API (CHAT_BASE_URL: the messaging API's earlier name, read for one release). */
const baseUrlOf = (api: ApiName) =>
  api === 'messaging' ? (process.env.MESSAGING_BASE_URL ?? process.env.CHAT_BASE_URL) : process.env.EMAIL_BASE_URL;

export const transports = (api: ApiName = 'messaging'): Transport[] => (baseUrlOf(api) ? ['remote'] : ['handler', 'http']);

export interface CallOptions {
  token?: string | null;
  query?: Record<string, string | number | boolean>;
  /** Form body: repeated keys as arrays (`reactions[x][]`). */
  form?: Record<string, string | number | boolean | (string | number)[]>;
  json?: unknown;
  /** Raw body with an explicit Content-Type, for malformed-input tests. */
  raw?: { body: string; contentType?: string };
  headers?: Record<string, string>;
}

export interface ApiResponse {
  status: number;
  headers: Record<string, string>;
  // Responses are JSON read by assertions; `any` keeps the test code short.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  text: string;
}

export interface ApiClient {
  call(method: string, path: string, options?: CallOptions): Promise<ApiResponse>;
  close(): Promise<void>;
}

function encode(options: CallOptions): { body: string; contentType?: string } {
  if (options.raw) return options.raw;
  if (options.json !== undefined) return { body: JSON.stringify(options.json), contentType: 'application/json' };
  if (options.form) {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(options.form)) {
      for (const v of Array.isArray(value) ? value : [value]) params.append(key, String(v));
    }
    return { body: params.toString(), contentType: 'application/x-www-form-urlencoded' };
  }
  return { body: '' };
}

function requestParts(path: string, options: CallOptions) {
  const query = options.query
    ? `?${new URLSearchParams(Object.entries(options.query).map(([k, v]): [string, string] => [k, String(v)]))}`
    : '';
  const { body, contentType } = encode(options);
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (contentType && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
    headers['Content-Type'] = contentType;
  }
  if (options.token !== null && options.token !== undefined) headers.Authorization = `Bearer ${options.token}`;
  return { url: `${path}${query}`, body, headers };
}

const lowerKeys = (headers: Record<string, unknown> = {}) =>
  Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), String(v)]));

const parse = (text: string) => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/** node:http rather than fetch: fetch refuses a body on GET, which hostile-input tests send. */
function send(url: string, method: string, headers: Record<string, string>, body: string) {
  return new Promise<{ status: number; headers: Record<string, string>; text: string }>((resolve, reject) => {
    const request = (url.startsWith('https:') ? httpsRequest : httpRequest)(
      url,
      { method, headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: lowerKeys(response.headers as Record<string, unknown>),
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body === '' ? undefined : body);
  });
}

/**
 * Every response any test receives is checked against docs/openapi.yaml, so
 * the document cannot drift from what the API really answers.
 */
export async function apiClient(api: ApiName, transport: Transport, options: { run?: Invoker } = {}): Promise<ApiClient> {
  const client = await rawClient(api, transport, options.run);
  return {
    async call(method, path, options) {
      const res = await client.call(method, path, options);
      // The document holds both APIs; a path of the other API is just an unknown route on this one.
      const ownPath = (api === 'email') === path.startsWith('/api/');
      if (ownPath) assertMatchesOpenApi(method, path, res.status, res.body);
      else if (res.status !== 404 || res.body?.error?.code !== 'route_not_found')
        throw new Error(`${method} ${path} should be an unknown route on the ${api} API`);
      if (!res.headers['x-request-id']) throw new Error(`${method} ${path} answered ${res.status} without X-Request-Id`);
      return res;
    },
    close: client.close,
  };
}

async function rawClient(api: ApiName, transport: Transport, run?: Invoker): Promise<ApiClient> {
  if (transport === 'handler') {
    return {
      async call(method, path, options = {}) {
        const { url, body, headers } = requestParts(path, options);
        const result = await dispatch(api, { method, url, headers, body }, run);
        return { status: result.statusCode, headers: lowerKeys(result.headers), body: parse(result.body), text: result.body };
      },
      close: async () => undefined,
    };
  }
  let server: RunningApi | undefined;
  let base: string;
  if (transport === 'remote') {
    base = baseUrlOf(api)!.replace(/\/$/, '');
  } else {
    server = await startApiServer(api, 0, undefined, run);
    base = server.url;
  }
  return {
    async call(method, path, options = {}) {
      const { url, body, headers } = requestParts(path, options);
      const response = await send(`${base}${url}`, method, headers, body);
      return { ...response, body: parse(response.text) };
    },
    close: async () => server?.close(),
  };
}
