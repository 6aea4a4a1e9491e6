import { endpoint, type EndpointInput, type EndpointSpec, type Reply } from '#shared/http/endpoint';

/** The email validation API takes JSON bodies only (other types: 415) and either credential: a secret key or a user token. */
export const emailEndpoint = <B = Record<string, never>, Q = Record<string, never>, P = undefined>(
  spec: Omit<EndpointSpec<B, Q, P, 'any'>, 'media' | 'credential'>,
  run: (input: EndpointInput<B, Q, P, 'any'>) => Promise<Reply>,
) => endpoint<B, Q, P, 'any'>({ ...spec, credential: 'any', media: ['json'] }, run);

/** Page-number envelope: the items under the resource's name, then page and totalPages. */
export const pageResponse = <T>(name: 'emails' | 'emailLists', items: T[], position: { page: number; totalPages: number }) => ({
  [name]: items,
  page: position.page,
  totalPages: position.totalPages,
});
