import { createHmac } from 'node:crypto';
import { secretKey } from '#shared/webhooks/secrets';

/**
 * Standard Webhooks headers for one attempt: `webhook-signature` is
 * `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` per secret,
 * space-separated, so during a rotation's overlap a receiver holding either
 * secret verifies the call.
 */
export function signatureHeaders(secrets: readonly string[], id: string, timestamp: number, body: string): Record<string, string> {
  const signed = `${id}.${timestamp}.${body}`;
  const signatures = secrets.map((secret) => `v1,${createHmac('sha256', secretKey(secret)).update(signed).digest('base64')}`);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatures.join(' '),
  };
}
