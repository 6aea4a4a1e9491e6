import qs from 'qs';
import { ApiError, badRequest } from '#shared/http/errors';

export const MAX_BODY_BYTES = 256 * 1024;

/**
 * Form bodies use Stripe-style brackets (`a[b][]=c`, `list[0][k]=v`). The
 * limits keep a hostile body from building huge or deep objects.
 */
export const parseForm = (text: string) =>
  qs.parse(text, { depth: 4, arrayLimit: 100, parameterLimit: 1000, allowPrototypes: false, charset: 'utf-8' });

export type MediaType = 'json' | 'form';

export function parseBody(
  raw: string | null | undefined,
  isBase64: boolean,
  contentType: string | undefined,
  accepted: readonly MediaType[],
): Record<string, unknown> {
  const text = raw ? (isBase64 ? Buffer.from(raw, 'base64').toString('utf8') : raw) : '';
  if (Buffer.byteLength(text) > MAX_BODY_BYTES) {
    throw new ApiError(413, 'body_too_large', `Request body exceeds ${MAX_BODY_BYTES} bytes`);
  }
  const media = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (text.trim() === '' && (media === '' || media === 'application/json' || media.endsWith('x-www-form-urlencoded'))) {
    return {};
  }
  if (media === 'application/json' && accepted.includes('json')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw badRequest('Request body is not valid JSON', undefined, 'invalid_json');
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw badRequest('Request body must be a JSON object', undefined, 'invalid_json');
    }
    return parsed as Record<string, unknown>;
  }
  if (media === 'application/x-www-form-urlencoded' && accepted.includes('form')) {
    return parseForm(text) as Record<string, unknown>;
  }
  const names = accepted.map((m) => (m === 'json' ? 'application/json' : 'application/x-www-form-urlencoded'));
  throw new ApiError(415, 'unsupported_media_type', `Content-Type must be ${names.join(' or ')}`);
}
