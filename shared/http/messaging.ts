import { endpoint, type EndpointInput, type EndpointSpec, type Reply } from '#shared/http/endpoint';

/** The messaging API accepts form bodies (its documented encoding) and JSON alike. */
export const messagingEndpoint = <B = Record<string, never>, Q = Record<string, never>, P = undefined>(
  spec: Omit<EndpointSpec<B, Q, P>, 'media'>,
  run: (input: EndpointInput<B, Q, P>) => Promise<Reply>,
) => endpoint({ ...spec, media: ['form', 'json'] }, run);
