import { randomBytes } from 'node:crypto';

/** A new Standard Webhooks secret: `whsec_` and 24 random bytes in base64 (the spec allows 24 to 64). */
export const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

/** The HMAC key of a secret: the base64-decoded part after `whsec_`. */
export const secretKey = (secret: string) => Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
