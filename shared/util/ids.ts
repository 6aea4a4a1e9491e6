import { createHash } from 'node:crypto';
import { encodeTime, monotonicFactory } from 'ulid';

/** Time-sortable ids: lexical order of the body equals creation order. Pure, so a bundle that makes no id carries no ulid. */
const ulid = /* @__PURE__ */ monotonicFactory();

export type IdPrefix = 'acct' | 'ct' | 'grp' | 'conv' | 'msg' | 'att' | 'tok' | 'tkn' | 'key' | 'evt' | 'whk' | 'file' | 'imp' | 'exp';

export const newId = (prefix: IdPrefix, now = Date.now()): string => `${prefix}_${ulid(now)}`;

/**
 * The same id every time for one `seed` (an idempotent request's generation):
 * the time part is `createdMs`, the rest comes from the seed's hash, so a
 * retry of a request writes the very id its first attempt wrote.
 */
export function derivedId(prefix: IdPrefix, createdMs: number, seed: string): string {
  const digest = createHash('sha256').update(`${prefix}\n${seed}`).digest();
  // The 16 characters of a ULID's random part (Crockford base32), 5 bits of one digest byte each.
  const random = Array.from(digest.subarray(0, 16), (byte) => CROCKFORD[byte & 31]).join('');
  return `${prefix}_${encodeTime(createdMs, 10)}${random}`;
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

const pattern = /^[a-z]+_[0-9A-HJKMNP-TV-Z]{26}$/;

/** Whether a string could be one of our ids of the given type (cheap guard before a read). */
export const looksLikeId = (prefix: IdPrefix, value: string): boolean => value.startsWith(`${prefix}_`) && pattern.test(value);

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);
