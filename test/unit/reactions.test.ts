import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import type { ReactionEntry } from '#shared/data/message-items';
import { planReactions, presentReactions, reactionChanges, reactionsBytes, reactionsInput } from '#shared/messaging/reactions';
import { encodedBytes } from '#shared/messaging/size';

const changes = (input: unknown) => reactionChanges(v.parse(reactionsInput, input));
const entries = (...list: [string, string[]][]): ReactionEntry[] => list.map(([name, contacts]) => ({ name, contacts }));

describe('reactions', () => {
  it('plans appends of only the contacts not there yet, in request order', () => {
    const current = entries(['thumbsup', ['alice', 'bob']], ['heart', ['carol']]);
    const plan = planReactions(current, changes({ thumbsup: ['bob', 'dave'], '🎉': 'erin', heart: ['carol'] }));
    expect(plan.ops).toEqual([
      { kind: 'add', name: 'thumbsup', contacts: ['dave'] },
      { kind: 'add', name: '🎉', contacts: ['erin'] },
    ]);
    expect(plan.namesAdded).toBe(1);
    expect(plan.clearAll).toBe(false);
  });

  it('removes a name with an empty value, re-adds it afresh after a removal, and clears all', () => {
    const current = entries(['a', ['x']], ['b', ['y']]);
    expect(planReactions(current, changes({ a: '' })).ops).toEqual([{ kind: 'remove', name: 'a' }]);
    expect(planReactions(current, changes({ nope: '' })).ops).toEqual([]);
    expect(planReactions(current, changes([{ a: '' }, { a: ['z'] }])).ops).toEqual([{ kind: 'replace', name: 'a', contacts: ['z'] }]);
    expect(planReactions(current, changes([{ c: ['z'] }, { c: '' }])).ops).toEqual([]);
    expect(planReactions(current, changes(''))).toMatchObject({ clearAll: true, ops: [], bytesDelta: -reactionsBytes(current) });
    expect(planReactions(current, changes(null)).clearAll).toBe(true);
  });

  it.each(['thumbsup', 'red-heart', 'plus_1', '+1', '👍', '👍🏽', '🇫🇷', '👨‍👩‍👧', '1️⃣', '#️⃣', '*️⃣', '0\u20E3'])('accepts the name %s', (name) => {
    expect(() => changes({ [name]: ['a'] })).not.toThrow();
  });

  it.each(['', 'has space', 'x'.repeat(33), '👍👍', 'é', '<script>', '1️⃣1️⃣', 'a\uFE0F\u20E3', '\u20E3'])('rejects the name %j', (name) => {
    expect(() => changes({ [name]: ['a'] })).toThrow(/reaction name/);
  });

  it('caps a request at 50 names and 1,000 contacts per name in the schema, before any merging', () => {
    const many = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`r${i}`, 'a']));
    expect(v.safeParse(reactionsInput, many).success).toBe(false);
    expect(
      v.safeParse(
        reactionsInput,
        Array.from({ length: 51 }, (_, i) => ({ [`r${i}`]: 'a' })),
      ).success,
    ).toBe(false);
    expect(v.safeParse(reactionsInput, { wave: Array.from({ length: 1001 }, (_, i) => `c${i}`) }).success).toBe(false);
    expect(v.safeParse(reactionsInput, Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`r${i}`, 'a']))).success).toBe(true);
  });

  it('caps the message at 50 names and 1,000 contacts per name', () => {
    const fifty = entries(...Array.from({ length: 50 }, (_, i): [string, string[]] => [`r${i}`, ['a']]));
    expect(() => planReactions(fifty, changes({ extra: ['a'] }))).toThrow(/at most 50/);
    expect(planReactions(fifty, changes([{ r0: '' }, { extra: ['a'] }])).namesAdded).toBe(0);
    const crowd = entries(['wave', Array.from({ length: 1000 }, (_, i) => `c${i}`)]);
    expect(() => planReactions(crowd, changes({ wave: ['one-more'] }))).toThrow(/at most 1000/);
    expect(planReactions(crowd, changes({ wave: ['c1'] })).ops).toEqual([]);
  });

  it('counts at least the bytes the reactions take in a response', () => {
    const list = entries(['thumbsup', ['alice', 'bob "the builder"']], ['🎉', ['\u0001', 'ünï']]);
    const plan = planReactions([], changes(presentReactions(list)));
    expect(plan.bytesDelta).toBe(reactionsBytes(list));
    expect(plan.bytesDelta).toBeGreaterThanOrEqual(encodedBytes(presentReactions(list)));
  });

  it('rejects an empty contact list rather than storing an empty reaction', () => {
    expect(v.safeParse(reactionsInput, { heart: [] }).success).toBe(false);
  });
});
