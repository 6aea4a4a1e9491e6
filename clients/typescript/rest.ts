import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { paths } from './openapi.generated.ts';

/** The operations of docs/openapi.yaml whose path starts with `Prefix`: each API's client offers only its own. */
type PathsUnder<Prefix extends string> = { [P in keyof paths as P extends `${Prefix}${string}` ? P : never]: paths[P] };

export type MessagingPaths = PathsUnder<'/v1/'>;
export type EmailPaths = PathsUnder<'/api/v1/'>;
export type MessagingClient = Client<MessagingPaths>;
export type EmailClient = Client<EmailPaths>;

export interface ApiClientOptions {
  /** The API's base URL, without `/v1` or `/api/v1` (each API has its own). */
  baseUrl: string;
  /** A user token (`tok_…`) or the account's secret key (`sk_…`); each operation's `security` says which it takes. */
  token: string;
  /** Another `fetch` (one with a timeout, a test's); by default the runtime's. */
  fetch?: ClientOptions['fetch'];
}

const bearer = ({ baseUrl, token, fetch }: ApiClientOptions): ClientOptions => ({
  baseUrl,
  headers: { Authorization: `Bearer ${token}` },
  ...(fetch ? { fetch } : {}),
});

/** The messaging API (`/v1`): a user's conversations and messages, the platform endpoints, the events feed. */
export const createMessagingClient = (options: ApiClientOptions): MessagingClient => createClient<MessagingPaths>(bearer(options));

/** The email validation API (`/api/v1`), with the account's secret key or a user token. */
export const createEmailClient = (options: ApiClientOptions): EmailClient => createClient<EmailPaths>(bearer(options));
