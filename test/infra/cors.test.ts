import { describe, expect, it } from 'vitest';
import { CORS_ALLOW_HEADERS } from '../../shared/http/cors.ts';
import { gatewayResponses } from '../../shared/http/gateway-responses.ts';
import { routes } from '../../shared/routes.ts';
import { apiNames } from '../../infra/api.ts';
import { synthStack } from '../steps/cdk-app.ts';

type Resource = { Type: string; Properties: Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
const resources = (template: ReturnType<typeof synthStack>['template'], type: string) =>
  Object.values(template.toJSON().Resources as Record<string, Resource>).filter((r) => r.Type === type);

describe('CORS on AWS (CORS_ORIGINS context value)', () => {
  it('adds nothing by default: no OPTIONS method, no CORS header on any gateway response, no variable', () => {
    const { template } = synthStack({}, 'NoCorsStack');
    expect(resources(template, 'AWS::ApiGateway::Method').filter((m) => m.Properties.HttpMethod === 'OPTIONS')).toEqual([]);
    for (const response of resources(template, 'AWS::ApiGateway::GatewayResponse')) {
      expect(Object.keys(response.Properties.ResponseParameters ?? {}).join()).not.toMatch(/Access-Control/);
    }
    for (const fn of resources(template, 'AWS::Lambda::Function'))
      expect(fn.Properties.Environment.Variables).not.toHaveProperty('CORS_ORIGINS');
  });

  it('answers the preflight on every resource of both APIs, without the authorizer, for one origin', () => {
    const { template } = synthStack({ CORS_ORIGINS: 'https://app.example.com' }, 'CorsStack');
    const methods = resources(template, 'AWS::ApiGateway::Method');
    const resourcesWithMethods = new Set(
      methods.filter((m) => m.Properties.HttpMethod !== 'OPTIONS').map((m) => JSON.stringify(m.Properties.ResourceId)),
    );
    const preflights = methods.filter((m) => m.Properties.HttpMethod === 'OPTIONS');
    expect(new Set(preflights.map((m) => JSON.stringify(m.Properties.ResourceId)))).toEqual(resourcesWithMethods);
    for (const preflight of preflights) {
      expect(preflight.Properties.AuthorizationType).toBe('NONE');
      expect(preflight.Properties.Integration.Type).toBe('MOCK');
      const headers = preflight.Properties.Integration.IntegrationResponses[0].ResponseParameters;
      expect(headers['method.response.header.Access-Control-Allow-Origin']).toBe("'https://app.example.com'");
      expect(headers['method.response.header.Access-Control-Allow-Headers']).toBe(`'${CORS_ALLOW_HEADERS.join(',')}'`);
    }
    expect(apiNames().length).toBe(2);
    // Gateway errors (401, 413, 429, 5xx) carry the header too, so a browser can read the envelope.
    const gatewayErrors = resources(template, 'AWS::ApiGateway::GatewayResponse');
    expect(gatewayErrors).toHaveLength(Object.keys(gatewayResponses).length * apiNames().length);
    for (const response of gatewayErrors) {
      expect(response.Properties.ResponseParameters['gatewayresponse.header.Access-Control-Allow-Origin']).toBe(
        "'https://app.example.com'",
      );
    }
    // Every function of the APIs adds the headers to its own responses.
    const apiFunctions = resources(template, 'AWS::Lambda::Function').filter((f) => f.Properties.Environment.Variables.CORS_ORIGINS);
    expect(apiFunctions).toHaveLength(routes.length + 2 * apiNames().length); // routes, plus an authorizer and a fallback per API
  });

  it('with several origins, the preflight checks the Origin and gateway errors echo it', () => {
    const { template } = synthStack({ CORS_ORIGINS: 'https://a.example.com, https://b.example.com' }, 'CorsManyStack');
    const preflight = resources(template, 'AWS::ApiGateway::Method').find((m) => m.Properties.HttpMethod === 'OPTIONS')!;
    expect(JSON.stringify(preflight.Properties.Integration.IntegrationResponses)).toContain('https://b.example.com');
    for (const response of resources(template, 'AWS::ApiGateway::GatewayResponse')) {
      expect(response.Properties.ResponseParameters['gatewayresponse.header.Access-Control-Allow-Origin']).toBe(
        'method.request.header.Origin',
      );
      // The answer then depends on the Origin: caches must keep one per origin
      expect(response.Properties.ResponseParameters['gatewayresponse.header.Vary']).toBe("'Origin'");
    }
  });

  it('refuses a value that is not an origin', () => {
    expect(() => synthStack({ CORS_ORIGINS: 'https://app.example.com/' }, 'BadCorsStack')).toThrow(
      /CORS_ORIGINS: 'https:\/\/app.example.com\/' is not an origin/,
    );
  });
});
