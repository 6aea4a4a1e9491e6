import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Secrets the service must show again are stored sealed, so a read of the
 * table alone (a backup, an export, a role with only dynamodb:GetItem) does
 * not reveal them: webhook endpoint secrets (the delivery worker signs with
 * them), and the credential in the recorded answer of an idempotent create
 * (a token, a webhook secret), which its replay shows again.
 *
 * - Deployed (`WEBHOOK_KMS_KEY_ID` set): encrypted with the stack's KMS key,
 *   the context as encryption context (a sealed secret copied onto another
 *   endpoint or record does not decrypt, and a function allowed to open
 *   replays cannot open a webhook's secret). The admin command line
 *   encrypts with the operator's credentials.
 * - Locally (`WEBHOOK_SECRET_KEY`, 32 random bytes in base64 that
 *   `npm start` generates and keeps beside its data): AES-256-GCM with the
 *   context as additional data. The same shape, without a key service.
 *
 * The KMS client is imported by the first seal or open: the stream consumer
 * never needs it, and the delivery worker only when a secret is not cached.
 */
export type Sealed = string;

/** What a sealed secret is bound to: a webhook endpoint, or the idempotency record of a create (account and key). */
export type SealContext = { webhook: string } | { replay: string };

const kmsKeyId = () => process.env.WEBHOOK_KMS_KEY_ID || undefined;

function localKey(): Buffer {
  const raw = process.env.WEBHOOK_SECRET_KEY;
  const key = raw ? Buffer.from(raw, 'base64') : undefined;
  if (!key || key.length !== 32) {
    throw new Error('sealed secrets need WEBHOOK_KMS_KEY_ID (deployed) or WEBHOOK_SECRET_KEY (32 bytes, base64; npm start sets it)');
  }
  return key;
}

/** The local cipher's additional data: a webhook's id alone, as secrets sealed before replays existed were. */
const additionalData = (context: SealContext) => Buffer.from('webhook' in context ? context.webhook : `replay:${context.replay}`);

let kms: Promise<{ client: import('@aws-sdk/client-kms').KMSClient; module: typeof import('@aws-sdk/client-kms') }> | undefined;
const kmsClient = () =>
  (kms ??= import('@aws-sdk/client-kms').then((module) => ({
    module,
    client: new module.KMSClient({ region: process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION }),
  })));

export async function seal(secret: string, context: SealContext): Promise<Sealed> {
  const keyId = kmsKeyId();
  if (keyId) {
    const { client, module } = await kmsClient();
    const out = await client.send(new module.EncryptCommand({ KeyId: keyId, Plaintext: Buffer.from(secret), EncryptionContext: context }));
    return `kms:${Buffer.from(out.CiphertextBlob!).toString('base64')}`;
  }
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', localKey(), iv);
  cipher.setAAD(additionalData(context));
  const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return `local:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
}

export async function open(sealed: Sealed, context: SealContext): Promise<string> {
  const [scheme, data = ''] = sealed.split(':', 2) as [string, string?];
  const bytes = Buffer.from(data, 'base64');
  if (scheme === 'kms') {
    const { client, module } = await kmsClient();
    const out = await client.send(new module.DecryptCommand({ CiphertextBlob: bytes, EncryptionContext: context }));
    return Buffer.from(out.Plaintext!).toString('utf8');
  }
  if (scheme !== 'local') throw new Error(`unknown sealed secret scheme "${scheme}"`);
  const decipher = createDecipheriv('aes-256-gcm', localKey(), bytes.subarray(0, 12));
  decipher.setAAD(additionalData(context));
  decipher.setAuthTag(bytes.subarray(12, 28));
  return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
}
