import { createHash } from 'node:crypto';
import { decodeTime, encodeTime } from 'ulid';

/**
 * A feed event's id is its own cursor: a time (10 characters, as a ULID's:
 * the change's, or the feed's previous id's when later, so that a feed's ids
 * sort in its order; shared/data/events.ts), its number in the feed (8) and a tag of the feed it belongs to
 * (8), all Crockford base32. Reading `after=<id>` needs no lookup, an id of
 * another feed is told apart by its tag, and one past the retention by its
 * time. The shape is any other id's (`evt_` and 26 characters).
 */
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const SEQ_CHARS = 8;
const TAG_CHARS = 8;
const pattern = /^evt_[0-9A-HJKMNP-TV-Z]{26}$/;

/** The highest number a feed can reach (40 bits): 35 years of a thousand events a second. */
export const MAX_SEQ = 32 ** SEQ_CHARS - 1;

function base32(n: number, chars: number): string {
  let out = '';
  for (let i = 0; i < chars; i++) {
    out = CROCKFORD[n % 32] + out;
    n = Math.floor(n / 32);
  }
  return out;
}

const fromBase32 = (text: string) => [...text].reduce((n, c) => n * 32 + CROCKFORD.indexOf(c), 0);

/** The feed's tag: the first characters of its partition's hash. */
export const feedTag = (partition: string) =>
  Array.from(createHash('sha256').update(partition).digest().subarray(0, TAG_CHARS), (byte) => CROCKFORD[byte & 31]).join('');

export const feedEventId = (partition: string, seq: number, createdMs: number) =>
  `evt_${encodeTime(createdMs, 10)}${base32(seq, SEQ_CHARS)}${feedTag(partition)}`;

export interface FeedPosition {
  seq: number;
  createdMs: number;
}

/** Where an id stands in the feed of `partition`; undefined when it is no event id of that feed. */
export function feedPosition(partition: string, id: string): FeedPosition | undefined {
  if (id.length !== 30 || !pattern.test(id)) return undefined;
  const body = id.slice(4);
  if (body.slice(10 + SEQ_CHARS) !== feedTag(partition)) return undefined;
  const seq = fromBase32(body.slice(10, 10 + SEQ_CHARS));
  return seq >= 1 ? { seq, createdMs: decodeTime(body.slice(0, 10) + '0'.repeat(16)) } : undefined;
}
