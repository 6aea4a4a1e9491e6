import { describe, expect, it } from 'vitest';
import { ApiError, catchUp, createMessagingClient, CursorExpiredError, type UserEvent } from '../../clients/typescript/index.ts';
import { assertMatchesOpenApi } from '../steps/openapi.ts';

/**
 * The client's catchUp over `GET /v1/events`, against a feed kept in memory
 * and served through the client's `fetch` option. Every answer of the fake
 * is checked against docs/openapi.yaml first, so the client is tested on
 * the document's objects.
 */
const token = `tok_${'A'.repeat(43)}`;
const eventId = (n: number) => `evt_${String(n).padStart(26, '0')}`;

const event = (n: number): UserEvent => ({
  id: eventId(n),
  type: 'message.deleted',
  created_at: 1_735_689_600 + n,
  user: 'ct_01JD5R7X1Y2Z3A4B5C6D7E8F9G',
  data: { object: { id: `msg_${String(n).padStart(26, '0')}`, conversation_id: 'conv_01JD5R8Z9Q4W3X2V1T0S9R8Q7P', deleted: true } },
});

const error = (type: string, code: string, param?: string) => ({
  error: { type, code, message: `refused: ${code}`, ...(param ? { param } : {}) },
});

/** A feed of `count` events; cursors at or before `expiredThrough` are past retention. */
function aFeed(count: number, { expiredThrough = -1, claimMoreWhenEmpty = false } = {}) {
  const log = Array.from({ length: count }, (_, n) => event(n));
  const asked: URL[] = [];
  const fetch = async (request: Request) => {
    const url = new URL(request.url);
    asked.push(url);
    const answer = (status: number, body: unknown) => {
      assertMatchesOpenApi('GET', `${url.pathname}${url.search}`, status, body);
      return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
    };
    if (request.headers.get('Authorization') !== `Bearer ${token}`) return answer(401, error('authentication_error', 'unauthorized'));
    const after = url.searchParams.get('after');
    const limit = Number(url.searchParams.get('limit') ?? 100);
    const index = after === null ? -1 : log.findIndex((e) => e.id === after);
    if (after !== null && index < 0) return answer(400, error('invalid_request_error', 'invalid_cursor', 'after'));
    if (after !== null && index <= expiredThrough) return answer(410, error('invalid_request_error', 'cursor_expired', 'after'));
    const data = log.slice(index + 1, index + 1 + limit);
    return answer(200, { has_more: claimMoreWhenEmpty || index + 1 + limit < log.length, data });
  };
  return { log, asked, client: createMessagingClient({ baseUrl: 'http://feed.invalid', token, fetch }) };
}

async function pagesOf(iterator: AsyncIterable<{ data: { id: string }[] }>) {
  const pages: string[][] = [];
  for await (const page of iterator) pages.push(page.data.map((e) => e.id));
  return pages;
}

describe('catchUp', () => {
  it('follows has_more from after, each page asked after the last event of the one before', async () => {
    // Given a feed of 17 events and an app that has the first 3
    const feed = aFeed(17);
    // When it catches up 5 at a time
    const pages = await pagesOf(catchUp(feed.client, { after: eventId(2), limit: 5 }));
    // Then it gets events 4 to 17 once each, in order, in pages of 5, 5 and 4
    expect(pages.map((p) => p.length)).toEqual([5, 5, 4]);
    expect(pages.flat()).toEqual(feed.log.slice(3).map((e) => e.id));
    expect(feed.asked.map((u) => u.searchParams.get('after'))).toEqual([eventId(2), eventId(7), eventId(12)]);
    expect(feed.asked.every((u) => u.pathname === '/v1/events' && u.searchParams.get('limit') === '5')).toBe(true);
  });

  it('reads from the oldest event without after, and yields nothing when nothing happened', async () => {
    const feed = aFeed(3);
    expect((await pagesOf(catchUp(feed.client))).flat()).toEqual(feed.log.map((e) => e.id));
    expect(feed.asked[0]!.searchParams.has('after')).toBe(false);
    expect(await pagesOf(catchUp(feed.client, { after: eventId(2) }))).toEqual([]);
  });

  it('throws CursorExpiredError on 410 cursor_expired', async () => {
    // Given an app whose cursor is past retention
    const feed = aFeed(5, { expiredThrough: 1 });
    // When it catches up, then it is told to start over, by a class it can tell apart
    const failure = await pagesOf(catchUp(feed.client, { after: eventId(1) })).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(CursorExpiredError);
    expect(failure).toMatchObject({ status: 410, code: 'cursor_expired', param: 'after' });
  });

  it('throws an ApiError, not an expiry, for a cursor of no event of the feed', async () => {
    const feed = aFeed(5);
    const failure = await pagesOf(catchUp(feed.client, { after: 'evt_01JD5R9A2B3C4D5E6F7G8H9J0K' })).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ApiError);
    expect(failure).not.toBeInstanceOf(CursorExpiredError);
    expect(failure).toMatchObject({ status: 400, code: 'invalid_cursor', param: 'after' });
  });

  it('stops at an empty page even if it claims more, rather than asking the same cursor forever', async () => {
    const feed = aFeed(2, { claimMoreWhenEmpty: true });
    expect((await pagesOf(catchUp(feed.client))).flat()).toEqual(feed.log.map((e) => e.id));
    expect(feed.asked).toHaveLength(2);
  });
});
