import { lookup } from 'node:dns/promises';
import net from 'node:net';
import { classifyAddress, isAllowedTarget } from '#shared/email/validator/address-policy';

/**
 * The SSRF guard of endpoint URLs, with the email validator's address policy
 * (shared/email/validator/address-policy.ts): deployed, only `https` URLs
 * whose host resolves to public addresses only; with
 * ALLOW_PRIVATE_WEBHOOKS=true (npm start, tests) also private addresses, and
 * plain `http` to loopback. Metadata, link-local and reserved addresses
 * never. It runs when an endpoint is created and again before every attempt,
 * and the attempt connects to the address checked (no second resolution a
 * rebinding DNS server could answer differently).
 */
export type UrlCheck = { ok: true; url: URL; address: string; family: 4 | 6 } | { ok: false; reason: string };

export const allowPrivateWebhooks = () => process.env.ALLOW_PRIVATE_WEBHOOKS === 'true';

const MAX_URL_LENGTH = 2048;

export async function checkWebhookUrl(raw: string, allowPrivate = allowPrivateWebhooks()): Promise<UrlCheck> {
  if (raw.length > MAX_URL_LENGTH) return { ok: false, reason: `the URL is longer than ${MAX_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'not an absolute URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, reason: 'only https URLs are accepted' };
  if (url.username || url.password) return { ok: false, reason: 'the URL must not carry credentials' };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: { address: string; family: number }[];
  try {
    addresses = net.isIP(host) ? [{ address: host, family: net.isIP(host) }] : await lookup(host, { all: true, verbatim: true });
  } catch {
    return { ok: false, reason: `the host ${host} does not resolve` };
  }
  if (addresses.length === 0) return { ok: false, reason: `the host ${host} does not resolve` };
  // Every address must pass: a name with one public and one private address could be made to connect to either.
  const refused = addresses.find((a) => !isAllowedTarget(a.address, allowPrivate));
  if (refused) return { ok: false, reason: `the host resolves to a ${classifyAddress(refused.address)} address (${refused.address})` };
  if (url.protocol === 'http:') {
    const loopback = allowPrivate && addresses.every((a) => a.address === '::1' || a.address.startsWith('127.'));
    if (!loopback) return { ok: false, reason: 'only https URLs are accepted' };
  }
  const [first] = addresses;
  return { ok: true, url, address: first!.address, family: first!.family === 6 ? 6 : 4 };
}
