// A row of the route table (shared/routes.ts): what it says of an endpoint, and the helper its rows are written with.

export type ApiName = 'messaging' | 'email';
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';
export type TableAccess = 'read' | 'readWrite';
export type QueueName = keyof typeof import('#shared/queues').queues;
/**
 * What a function does with the files bucket (least-privilege S3 grants):
 * `read` makes download URLs and checks uploads (s3:GetObject), `write`
 * makes upload URLs and tags objects (s3:PutObject, s3:PutObjectTagging),
 * `delete` deletes objects (s3:DeleteObject). A presigned URL carries the
 * rights of the function that signed it, so signing one needs the action it
 * allows.
 */
export type FileAccess = 'read' | 'write' | 'delete';

export interface Route {
  api: ApiName;
  method: HttpMethod;
  /** API Gateway resource path, `{name}` for path parameters. */
  path: string;
  /** Module under functions/, without extension; it exports `handler`. */
  handler: string;
  table: TableAccess;
  /** Queues the function sends to (least-privilege grants). */
  sends?: QueueName[];
  /** Lambda timeout in seconds (default DEFAULT_TIMEOUT_SECONDS in shared/routes.ts). */
  timeoutSeconds?: number;
  /** Runs the email validator: gets the deployment's validator settings (DNS_SERVERS, SMTP_PROBE, ...). */
  validates?: boolean;
  /**
   * The credential the route takes: a user token (`user`), the account's
   * secret key (`secret`), or either (`any`). Every route sits behind the one
   * authorizer, which names the kind; the handler answers 403 to the other
   * (its endpoint spec says the same, and a test holds the two equal).
   */
  credential: Credential;
  /** Shows the account's rate limit: gets the deployment's default (ACCOUNT_RATE_LIMIT, ACCOUNT_BURST_LIMIT). */
  showsLimits?: boolean;
  /**
   * Seals a secret with the webhook key (kms:Encrypt): a new webhook secret, or
   * the credential in an idempotent create's recorded answer, which its
   * replay opens (kms:Decrypt, of replays only: shared/util/sealing.ts).
   */
  seals?: boolean;
  /** Uses the files bucket: see FileAccess. Gets FILES_BUCKET (and with `write`, MAX_FILE_BYTES and FILE_CONTENT_TYPES). */
  files?: readonly FileAccess[];
}

export type Credential = 'user' | 'secret' | 'any';

/**
 * The rows of one API that take one credential: each names its method,
 * path, handler and table access, and only what sets it apart besides.
 */
export const rowsOf =
  (api: ApiName, credential: Credential) =>
  (method: HttpMethod, path: string, handler: string, table: TableAccess, extra: Partial<Route> = {}): Route => ({
    api,
    method,
    path,
    handler,
    table,
    credential,
    ...extra,
  });
