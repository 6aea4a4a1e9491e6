import { describe, expect, it } from 'vitest';
import { startApiServer } from '../../scripts/local/http-server.ts';
import type { Invoker } from '../../scripts/local/lambda.ts';

/**
 * Stopping `npm start` (Ctrl-C, SIGTERM) while requests run: each is
 * answered before its connection goes, since its write may already have
 * committed, and nothing new is taken.
 */
describe('the local API server, stopped while a request runs', () => {
  it('answers the request under way, then takes no new connection', async () => {
    // Given a server whose function (here the fallback of an unknown path) answers only when the test lets it
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const slow: Invoker = async () => {
      started();
      await finished;
      return { statusCode: 404, headers: { 'Content-Type': 'application/json' }, body: '{"answered":true}' };
    };
    const server = await startApiServer('messaging', 0, undefined, slow);
    const request = fetch(`${server.url}/v1/nowhere`);
    await running;
    // When the server is stopped, and the function finishes afterwards
    const stopped = server.close();
    finish();
    // Then the request gets its answer, and the stop completes
    const res = await request;
    expect([res.status, await res.json()]).toEqual([404, { answered: true }]);
    await stopped;
    // And a new request finds no server
    await expect(fetch(`${server.url}/v1/nowhere`)).rejects.toThrow();
  });
});
