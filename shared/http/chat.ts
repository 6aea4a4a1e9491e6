import type { z } from 'zod';
import { endpoint, type EndpointInput, type EndpointSpec, type Reply } from '#shared/http/endpoint';

/** The messaging API accepts form bodies (its documented encoding) and JSON alike. */
export const chatEndpoint = <B = Record<string, never>, Q = Record<string, never>>(
  spec: Omit<EndpointSpec<B, Q>, 'media'> & { body?: z.ZodType<B>; query?: z.ZodType<Q> },
  run: (input: EndpointInput<B, Q>) => Promise<Reply>,
) => endpoint({ ...spec, media: ['form', 'json'] }, run);


