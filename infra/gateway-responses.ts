import { ResponseType, type RestApi } from 'aws-cdk-lib/aws-apigateway';
import { CORS_EXPOSE_HEADERS, gatewayAllowOrigin } from '../shared/http/cors.ts';
import { gatewayResponses, type GatewayResponseType } from '../shared/http/gateway-responses.ts';

/** Our own words in every case: the contract allows no AWS error text ($context.error.messageString) in a body. */
export function envelopeTemplate(type: GatewayResponseType): string {
  const { type: errorType, code, message } = gatewayResponses[type];
  return `{"error":{"type":${JSON.stringify(errorType)},"code":${JSON.stringify(code)},"message":${JSON.stringify(message)}}}`;
}

/** Makes API Gateway's own errors (authorizer, throttling, size limits) speak the API's error envelope (docs/api-conventions.md). */
/** CORS headers of the gateway's own responses (shared/http/cors.ts says why several origins are echoed). */
function corsResponseHeaders(allowed: readonly string[]): Record<string, string> {
  const rule = gatewayAllowOrigin(allowed);
  if (rule === undefined) return {};
  return {
    'Access-Control-Allow-Origin': rule === 'echo' ? 'method.request.header.Origin' : `'${rule.static}'`,
    'Access-Control-Expose-Headers': `'${CORS_EXPOSE_HEADERS.join(', ')}'`,
    // An echoed origin makes the answer depend on the request's Origin: caches must keep one per origin.
    ...(rule === 'echo' ? { Vary: "'Origin'" } : {}),
  };
}

export function addGatewayResponses(api: RestApi, corsOrigins: readonly string[] = []): void {
  for (const [name, definition] of Object.entries(gatewayResponses) as [
    GatewayResponseType,
    (typeof gatewayResponses)[GatewayResponseType],
  ][]) {
    const type = ResponseType.of(name);
    api.addGatewayResponse(`${name}Response`, {
      type,
      statusCode: definition.statusCode === undefined ? undefined : String(definition.statusCode),
      // Header values are mapping expressions: quoted literals or context variables.
      responseHeaders: {
        'Content-Type': "'application/json'",
        'X-Request-Id': 'context.requestId',
        ...Object.fromEntries(Object.entries(definition.headers).map(([k, v]) => [k, `'${v}'`])),
        ...corsResponseHeaders(corsOrigins),
      },
      templates: { 'application/json': envelopeTemplate(name) },
    });
  }
}
