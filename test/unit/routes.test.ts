import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { matchPath, resolveRoute, routes } from '#shared/routes';

describe('route table', () => {
  it('matches templates segment by segment and decodes parameters', () => {
    expect(matchPath('/v1/messages/{id}', '/v1/messages/msg_1')).toEqual({ id: 'msg_1' });
    expect(matchPath('/v1/messages/{id}', '/v1/messages/a%20b')).toEqual({ id: 'a b' });
    expect(matchPath('/v1/messages/{id}', '/v1/messages')).toBeUndefined();
    expect(matchPath('/v1/messages', '/v1/messages/x')).toBeUndefined();
  });

  it('resolves routes, 405s with the allowed methods, 404s the rest', () => {
    expect(resolveRoute('messaging', 'GET', '/v1/messages')).toMatchObject({ kind: 'route', route: { handler: 'messages/list' } });
    expect(resolveRoute('messaging', 'PATCH', '/v1/conversations/c')).toEqual({
      kind: 'method_not_allowed',
      allowed: ['GET', 'PUT', 'DELETE'],
    });
    expect(resolveRoute('messaging', 'GET', '/v1/unknown')).toEqual({ kind: 'not_found' });
    expect(resolveRoute('email', 'GET', '/v1/messages')).toEqual({ kind: 'not_found' });
  });

  it('has one row per method and path, each with its own handler module', () => {
    const keys = routes.map((r) => `${r.api} ${r.method} ${r.path}`);
    expect(new Set(keys).size).toBe(keys.length);
    const handlers = routes.map((r) => r.handler);
    expect(new Set(handlers).size).toBe(handlers.length);
  });

  it('takes in each handler the credential its row names: user token, secret key or either', async () => {
    // Given every route's handler module, when its endpoint's credential is read, then it is the row's
    const kinds = await Promise.all(
      routes.map(async (r) => {
        const module = (await import(
          /* @vite-ignore */ pathToFileURL(join(import.meta.dirname, '../../functions', `${r.handler}.ts`)).href
        )) as { handler: { credential?: string } };
        return `${r.method} ${r.path} ${module.handler.credential}`;
      }),
    );
    expect(kinds).toEqual(routes.map((r) => `${r.method} ${r.path} ${r.credential}`));
    // The platform rows take the secret key, the user's own rows a user token, the email API either
    expect(
      routes
        .filter((r) => r.path.startsWith('/v1/conversations') || r.path.startsWith('/v1/messages'))
        .every((r) => r.credential === 'user'),
    ).toBe(true);
    expect(routes.filter((r) => r.api === 'email').every((r) => r.credential === 'any')).toBe(true);
    expect(routes.find((r) => r.method === 'POST' && r.path === '/v1/contacts')!.credential).toBe('secret');
  });
});
