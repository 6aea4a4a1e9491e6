import type { CredentialKind } from '#shared/http/authenticate';
import { endpoint, type EndpointInput, type EndpointSpec, type Reply } from '#shared/http/endpoint';

type Spec<B, Q, P, K extends CredentialKind> = Omit<EndpointSpec<B, Q, P, K>, 'media' | 'credential'>;

/** A user's endpoint of the messaging API: a user token; form bodies (its documented encoding) and JSON alike. */
export const messagingEndpoint = <B = Record<string, never>, Q = Record<string, never>, P = undefined>(
  spec: Spec<B, Q, P, 'user'>,
  run: (input: EndpointInput<B, Q, P, 'user'>) => Promise<Reply>,
) => endpoint<B, Q, P, 'user'>({ ...spec, credential: 'user', media: ['form', 'json'] }, run);

/** A platform endpoint: the account's backend with its secret key (or, where a route says so, either credential). */
export const platformEndpoint = <B = Record<string, never>, Q = Record<string, never>, P = undefined, K extends CredentialKind = 'secret'>(
  spec: Spec<B, Q, P, K> & { credential?: K },
  run: (input: EndpointInput<B, Q, P, K>) => Promise<Reply>,
) => endpoint<B, Q, P, K>({ ...spec, credential: spec.credential ?? ('secret' as K), media: ['form', 'json'] }, run);
