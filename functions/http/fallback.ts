import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { ApiError } from '#shared/http/errors';
import { errorEnvelope, requestContext } from '#shared/http/middleware';
import { resolveRoute, type ApiName } from '#shared/routes';
import { instrumented } from '#shared/util/invocation';

/** Catches every request no route row matched: 405 on a known path, else 404. */
export const handler = instrumented(
  middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(requestContext())
    .use(errorEnvelope())
    .handler(async (event) => {
      // The stack tells each API's fallback which API it serves; the local adapter says so in apiId.
      const api = (process.env.API_NAME ?? event.requestContext?.apiId) as ApiName;
      const match = resolveRoute(api, event.httpMethod, event.path);
      if (match.kind === 'method_not_allowed') {
        throw new ApiError(405, 'method_not_allowed', `Method ${event.httpMethod} is not allowed on ${event.path}`, undefined, {
          Allow: match.allowed.join(', '),
        });
      }
      throw new ApiError(404, 'route_not_found', `Unrecognized request URL (${event.httpMethod}: ${event.path})`);
    }),
);
