import { ResponseType, type RestApi } from 'aws-cdk-lib/aws-apigateway';
import { gatewayResponses, type GatewayResponseType } from '../shared/http/gateway-responses.ts';

/** API Gateway substitutes this with its own, already JSON-quoted, error message. */
const GATEWAY_MESSAGE = '$context.error.messageString';

/** For a generic 4XX (e.g. a malformed request API Gateway rejects) its own message says more than ours. */
const passThroughMessage: Partial<Record<GatewayResponseType, true>> = { DEFAULT_4XX: true };

export function envelopeTemplate(type: GatewayResponseType): string {
  const { type: errorType, code, message } = gatewayResponses[type];
  const text = passThroughMessage[type] ? GATEWAY_MESSAGE : JSON.stringify(message);
  return `{"error":{"type":${JSON.stringify(errorType)},"code":${JSON.stringify(code)},"message":${text}}}`;
}

/** Makes API Gateway's own errors (authorizer, throttling, size limits) speak the contract's envelope. */
export function addGatewayResponses(api: RestApi): void {
  for (const [name, definition] of Object.entries(gatewayResponses) as [GatewayResponseType, (typeof gatewayResponses)[GatewayResponseType]][]) {
    const type = ResponseType.of(name);
    api.addGatewayResponse(`${name}Response`, {
      type,
      statusCode: definition.statusCode === undefined ? undefined : String(definition.statusCode),
      // Header values are mapping expressions: quoted literals or context variables.
      responseHeaders: {
        'Content-Type': "'application/json'",
        'X-Request-Id': 'context.requestId',
        ...Object.fromEntries(Object.entries(definition.headers).map(([k, v]) => [k, `'${v}'`])),
      },
      templates: { 'application/json': envelopeTemplate(name) },
    });
  }
}
