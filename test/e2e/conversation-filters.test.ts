import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countDynamoCalls, totalItemsRead, type DynamoCall } from '../steps/dynamodb-calls.ts';
import { aTenant, manyConversations, type Tenant } from '../steps/given.ts';
import { apiClient, transports, type ApiClient } from '../steps/when.ts';

const CONVERSATIONS = 5000;

/**
 * A filtered conversation list costs reads proportional to the page, not to
 * the user's conversations: 5,000 conversations, one of them muted, pinned
 * and archived, one in a group. Calls and items read are counted where the
 * handlers run in this process (not against a deployed stack).
 */
describe.each(transports())('filtered conversation lists over %s', (transport) => {
  let api: ApiClient;
  let t: Tenant;
  let special: string;
  let inGroup: string;
  let newestFirst: string[];

  beforeAll(async () => {
    api = await apiClient('messaging', transport);
    t = await aTenant();
    const all = await manyConversations(t, CONVERSATIONS, (i) =>
      i === 1234 ? { is_muted: true, is_pinned: true, archived_at: 1700000000 } : {},
    );
    special = all[1234]!.id;
    inGroup = (await api.call('POST', '/v1/conversations', { token: t.token, form: { group_id: t.groupId } })).body.id;
    newestFirst = [inGroup, ...all.map((c) => c.id).reverse()];
  }, 120_000);
  afterAll(() => api.close());

  const list = async (query: Record<string, string | number>) => {
    const { result, calls } = await countDynamoCalls(() => api.call('GET', '/v1/conversations', { token: t.token, query }));
    expect(result.status).toBe(200);
    return { ids: result.body.data.map((c: { id: string }) => c.id) as string[], hasMore: result.body.has_more as boolean, calls };
  };
  const queries = (calls: DynamoCall[]) => calls.filter((c) => c.command === 'QueryCommand').length;
  const counted = transport !== 'remote';

  it.each([
    [{ muted: 'true' }, 4],
    [{ pinned: 'true' }, 4],
    [{ archived: 'true' }, 4],
    [{ muted: 'true', pinned: 'true' }, 2],
    [{ muted: '1', pinned: '1', archived: '1' }, 1],
  ])('%j reads only the match: one Query per matching state partition', async (query, partitions) => {
    const { ids, hasMore, calls } = await list({ ...query, limit: 100 });
    expect(ids).toEqual([special]);
    expect(hasMore).toBe(false);
    if (!counted) return;
    expect(queries(calls)).toBe(partitions);
    // The token lookup and the one match.
    expect(calls).toHaveLength(partitions + 1);
    expect(totalItemsRead(calls)).toBe(2);
  });

  it('group_id reads the guard item and the conversation', async () => {
    const { ids, calls } = await list({ group_id: t.groupId, limit: 100 });
    expect(ids).toEqual([inGroup]);
    const none = await list({ group_id: t.groupId, muted: 'true' });
    expect(none.ids).toEqual([]);
    if (!counted) return;
    expect(calls.map((c) => c.command)).toEqual(['GetItemCommand', 'GetItemCommand', 'GetItemCommand']);
    expect(totalItemsRead(calls)).toBe(3);
  });

  it('a filter matching nearly all reads at most one page per partition, and pages on with cursors', async () => {
    const expected = newestFirst.filter((id) => id !== special);
    const first = await list({ muted: 'false', limit: 10 });
    expect(first.ids).toEqual(expected.slice(0, 10));
    expect(first.hasMore).toBe(true);
    const second = await list({ muted: 'false', limit: 10, starting_after: first.ids.at(-1)! });
    expect(second.ids).toEqual(expected.slice(10, 20));
    const back = await list({ muted: 'false', limit: 5, ending_before: second.ids[0]! });
    expect(back.ids).toEqual(expected.slice(5, 10));
    expect(back.hasMore).toBe(true);
    if (!counted) return;
    // 4 partitions × (limit + 1) items at most, plus the token (and the cursor check).
    expect(totalItemsRead(first.calls)).toBeLessThanOrEqual(1 + 4 * 11);
    expect(totalItemsRead(second.calls)).toBeLessThanOrEqual(2 + 4 * 11);
  });

  it('refuses a cursor the filters leave out of the list, naming it', async () => {
    // When a muted list is paged from a conversation that is not muted, and an unmuted one from the muted conversation
    for (const [query, cursor] of [
      [{ muted: 'true', starting_after: newestFirst[5]! }, 'starting_after'],
      [{ muted: 'false', ending_before: special }, 'ending_before'],
      [{ group_id: t.groupId, starting_after: special }, 'starting_after'],
    ] as const) {
      const res = await api.call('GET', '/v1/conversations', { token: t.token, query });
      // Then each is a 400 naming the cursor, as an id that is in no list is
      expect(res.status, JSON.stringify(query)).toBe(400);
      expect(res.body.error.param).toBe(cursor);
    }
  });

  it('the unfiltered list reads one page', async () => {
    const { ids, calls } = await list({ limit: 100 });
    expect(ids).toEqual(newestFirst.slice(0, 100));
    if (!counted) return;
    expect(queries(calls)).toBe(1);
    expect(totalItemsRead(calls)).toBe(1 + 101);
  });
});
