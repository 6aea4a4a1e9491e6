import { timingSafeEqual } from 'node:crypto';
import { ALGORITHM_IDENTIFIER, getCanonicalHeaders, MAX_PRESIGNED_TTL, SignatureV4, UNSIGNED_PAYLOAD } from '@smithy/signature-v4';
import { Sha256 } from './sha256.ts';

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/** Why S3 would refuse the request: its status, error code and message. */
export interface Refusal {
  status: number;
  code: string;
  message: string;
}

/** What the check reads of a request: its method, the URL as sent (path still encoded) and its headers, each name's values apart. */
export interface SignedRequest {
  method: string;
  url: string;
  headers: Record<string, string[] | undefined>;
}

type CanonicalRequest = Parameters<typeof getCanonicalHeaders>[0];

const refuse = (status: number, code: string, message: string): Refusal => ({ status, code, message });
const denied = (message: string) => refuse(403, 'AccessDenied', message);
const queryError = (message: string) => refuse(400, 'AuthorizationQueryParametersError', message);
const headerError = (message: string) => refuse(400, 'AuthorizationHeaderMalformed', message);
const mismatch = refuse(
  403,
  'SignatureDoesNotMatch',
  'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
);

/** S3 accepts a signed request this far from its clock; a presigned URL has its own expiry instead. */
const MAX_SKEW_MS = 15 * 60_000;

/**
 * Checks a request's AWS Signature Version 4 the way S3 does: presigned
 * (X-Amz-* query parameters) or signed in the Authorization header. The
 * signature is computed again from what arrived: the method, the path as
 * sent (S3 does not encode it twice), every query parameter but the
 * signature, and only the headers the request says it signed, with their
 * values as they arrived. So a presigned PUT sent with another
 * Content-Length, Content-Type or x-amz-tagging than it was signed for, or
 * without one of them, is refused, as by S3.
 *
 * The payload hash is the one the request names (its x-amz-content-sha256,
 * or UNSIGNED-PAYLOAD for a presigned URL, as S3 takes it); the body itself
 * is not hashed, so a header-signed request whose body differs from the
 * hash it names is not caught here (S3 would answer XAmzContentSHA256Mismatch).
 */
export class SigV4Check {
  private readonly signers = new Map<string, ScopedSigner>();

  constructor(
    credentials: readonly S3Credentials[],
    private readonly region: string,
  ) {
    for (const c of credentials) this.signers.set(c.accessKeyId, new ScopedSigner(c, region));
  }

  /** Undefined when the request is signed by a known key and still valid; else why S3 would refuse it. */
  async check(request: SignedRequest, now = Date.now()): Promise<Refusal | undefined> {
    const queryAt = request.url.indexOf('?');
    const path = queryAt === -1 ? request.url : request.url.slice(0, queryAt);
    const query = parseQuery(queryAt === -1 ? '' : request.url.slice(queryAt + 1));
    const presigned = query['X-Amz-Algorithm'] !== undefined;
    const authorization = request.headers.authorization;
    if (presigned && authorization) {
      return refuse(
        400,
        'InvalidArgument',
        'Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter or the Authorization header should be specified',
      );
    }
    if (!presigned && !authorization) return denied('Access Denied');
    const auth = presigned ? queryAuth(query) : headerAuth(authorization!, request.headers, now);
    if ('status' in auth) return auth;

    const scope = auth.credential.split('/');
    const [accessKeyId, shortDate, region, service, terminator] = scope;
    const paramError = presigned ? queryError : headerError;
    const credentialName = presigned ? 'X-Amz-Credential parameter' : 'Authorization header';
    if (scope.length !== 5 || terminator !== 'aws4_request') return paramError(`Error parsing the ${credentialName}`);
    if (service !== 's3')
      return paramError(`Error parsing the ${credentialName}; incorrect service '${service}'. This endpoint belongs to 's3'.`);
    if (region !== this.region)
      return paramError(`The ${credentialName} is malformed; the region '${region}' is wrong; expecting '${this.region}'`);
    if (shortDate !== auth.longDate.slice(0, 8))
      return paramError(`Invalid credential date. Date is not the same as ${presigned ? 'X-Amz-Date' : 'x-amz-date'}.`);
    const signer = this.signers.get(accessKeyId!);
    if (!signer) return refuse(403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.');

    const signedNames = auth.signedHeaders.split(';');
    // S3 takes no x-amz-* header the signature leaves out.
    const unsigned = Object.keys(request.headers).filter((name) => name.startsWith('x-amz-') && !signedNames.includes(name));
    if (unsigned.length > 0) return denied(`There were headers present in the request which were not signed: ${unsigned.join(', ')}`);
    const headers: Record<string, string> = {};
    for (const name of signedNames) {
      const values = request.headers[name];
      if (values !== undefined) headers[name] = values.join(',');
    }
    const { 'X-Amz-Signature': _signature, ...signedQuery } = query;
    const payloadHash = headers['x-amz-content-sha256'] ?? (presigned ? queryPayloadHash(query) : undefined) ?? UNSIGNED_PAYLOAD;
    const expected = await signer.signature(
      { method: request.method, protocol: 'http:', hostname: '', path, query: signedQuery, headers },
      payloadHash,
      auth.longDate,
      auth.credential.slice(accessKeyId!.length + 1),
    );
    if (!sameSignature(expected, auth.signature)) return mismatch;
    if (auth.expiresAt !== undefined && now > auth.expiresAt) return denied('Request has expired');
    return undefined;
  }
}

interface Auth {
  credential: string;
  signedHeaders: string;
  signature: string;
  longDate: string;
  /** A presigned URL's end of validity, in ms. */
  expiresAt?: number;
}

/** X-Amz-* query parameters, read as S3 reads them (their names are case-sensitive). */
function queryAuth(query: Query): Auth | Refusal {
  if (firstOf(query['X-Amz-Algorithm']) !== ALGORITHM_IDENTIFIER)
    return queryError(`X-Amz-Algorithm only supports "${ALGORITHM_IDENTIFIER}"`);
  const [credential, longDate, expires, signedHeaders, signature] = [
    'X-Amz-Credential',
    'X-Amz-Date',
    'X-Amz-Expires',
    'X-Amz-SignedHeaders',
    'X-Amz-Signature',
  ].map((name) => firstOf(query[name]));
  if (!credential || !longDate || !expires || !signedHeaders || !signature) {
    return queryError(
      'Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.',
    );
  }
  const signedAt = parseLongDate(longDate);
  if (signedAt === undefined) return queryError(`X-Amz-Date must be in the ISO8601 Long Format "yyyyMMdd'T'HHmmss'Z'"`);
  if (!/^\d{1,9}$/.test(expires)) return queryError('X-Amz-Expires should be a number');
  if (Number(expires) > MAX_PRESIGNED_TTL) {
    return queryError(
      `X-Amz-Expires must be less than a week (in seconds) that is; the given X-Amz-Expires must be less than ${MAX_PRESIGNED_TTL} seconds`,
    );
  }
  return { credential, signedHeaders, signature, longDate, expiresAt: signedAt + Number(expires) * 1000 };
}

/** `AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...`, with x-amz-date and x-amz-content-sha256 beside it. */
function headerAuth(authorization: string[], headers: SignedRequest['headers'], now: number): Auth | Refusal {
  const value = authorization.join(',');
  if (!value.startsWith(`${ALGORITHM_IDENTIFIER} `)) return refuse(400, 'InvalidArgument', 'Unsupported Authorization Type');
  const parts = new Map(
    value
      .slice(ALGORITHM_IDENTIFIER.length + 1)
      .split(',')
      .map((part) => {
        const at = part.indexOf('=');
        return [part.slice(0, at).trim(), part.slice(at + 1).trim()] as const;
      }),
  );
  const credential = parts.get('Credential');
  const signedHeaders = parts.get('SignedHeaders');
  const signature = parts.get('Signature');
  if (parts.size !== 3 || !credential || !signedHeaders || !signature) {
    return headerError(
      'The authorization header is malformed; the authorization header requires three components: Credential, SignedHeaders, and Signature.',
    );
  }
  const longDate = headers['x-amz-date']?.[0];
  const signedAt = longDate === undefined ? undefined : parseLongDate(longDate);
  if (longDate === undefined || signedAt === undefined) return denied('AWS authentication requires a valid Date or x-amz-date header');
  if (Math.abs(now - signedAt) > MAX_SKEW_MS) {
    return refuse(403, 'RequestTimeTooSkewed', 'The difference between the request time and the current time is too large.');
  }
  if (!headers['x-amz-content-sha256'])
    return refuse(400, 'InvalidRequest', 'Missing required header for this request: x-amz-content-sha256');
  return { credential, signedHeaders, signature, longDate };
}

/** The signer of one key pair, which also computes the signature a request should carry. */
class ScopedSigner extends SignatureV4 {
  constructor(credentials: S3Credentials, region: string) {
    // uriEscapePath false: S3 signs the path as sent, encoded once.
    super({ service: 's3', region, credentials, sha256: Sha256, uriEscapePath: false, applyChecksum: false });
  }

  /**
   * The canonical request and string to sign of the SigV4 signer itself, with
   * the payload hash S3 takes (the signer's presign would take it from a header only).
   */
  async signature(request: CanonicalRequest, payloadHash: string, longDate: string, scope: string): Promise<string> {
    const canonicalHeaders = getCanonicalHeaders(request, undefined, new Set(Object.keys(request.headers)));
    const stringToSign = await this.createStringToSign(
      longDate,
      scope,
      this.createCanonicalRequest(request, canonicalHeaders, payloadHash),
      ALGORITHM_IDENTIFIER,
    );
    return this.sign(stringToSign, { signingDate: new Date(parseLongDate(longDate)!) });
  }
}

type Query = Record<string, string | string[]>;

/** Decoded query parameters, a repeated name keeping every value (the canonical query lists each). */
function parseQuery(raw: string): Query {
  const query: Query = {};
  for (const [name, value] of new URLSearchParams(raw)) {
    const seen = query[name];
    query[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
  }
  return query;
}

/** A presigned URL's payload hash, when it names one: the signer hoists the header under its own spelling (`x-amz-content-sha256`). */
const queryPayloadHash = (query: Query) =>
  firstOf(Object.entries(query).find(([name]) => name.toLowerCase() === 'x-amz-content-sha256')?.[1]);

const firstOf = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/** `20130721T201207Z` as ms, or undefined. */
function parseLongDate(value: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const ms = Date.UTC(year, month - 1, day, hour, minute, second);
  return new Date(ms).getUTCDate() === day ? ms : undefined;
}

function sameSignature(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}
