import { describe, expect, it } from 'vitest';
import { applyReactions, presentReactions, reactionChanges, reactionsInput } from '#shared/messaging/reactions';

const changes = (input: unknown) => reactionChanges(reactionsInput.parse(input));

describe('reactions', () => {
  it('merges as set unions, keeping first-added order of names and contacts', () => {
    const first = applyReactions([], changes({ thumbsup: ['alice', 'bob'], heart: ['carol'] }));
    const second = applyReactions(first, changes({ thumbsup: ['bob', 'dave'], '🎉': 'erin' }));
    expect(presentReactions(second)).toEqual([{ thumbsup: ['alice', 'bob', 'dave'] }, { heart: ['carol'] }, { '🎉': ['erin'] }]);
    expect(presentReactions(first)).toEqual([{ thumbsup: ['alice', 'bob'] }, { heart: ['carol'] }]);
  });

  it('removes one reaction with an empty value and all with an empty reactions value', () => {
    const current = applyReactions([], changes([{ a: ['x'] }, { b: ['y'] }]));
    expect(presentReactions(applyReactions(current, changes({ a: '' })))).toEqual([{ b: ['y'] }]);
    expect(applyReactions(current, changes(''))).toEqual([]);
    expect(applyReactions(current, changes(null))).toEqual([]);
  });

  it.each(['thumbsup', 'red-heart', 'plus_1', '+1', '👍', '👍🏽', '🇫🇷', '👨‍👩‍👧'])('accepts the name %s', (name) => {
    expect(() => changes({ [name]: ['a'] })).not.toThrow();
  });

  it.each(['', 'has space', 'x'.repeat(33), '👍👍', 'é', '<script>'])('rejects the name %j', (name) => {
    expect(() => changes({ [name]: ['a'] })).toThrow(/reaction name/);
  });

  it('caps names per message and contacts per name', () => {
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`r${i}`, ['a']]));
    expect(() => applyReactions([], changes(many))).toThrow(/at most 50/);
    const crowd = Array.from({ length: 1000 }, (_, i) => `c${i}`);
    const full = applyReactions([], changes({ wave: crowd }));
    expect(() => applyReactions(full, changes({ wave: ['one-more'] }))).toThrow(/at most 1000/);
  });

  it('rejects an empty contact list rather than storing an empty reaction', () => {
    expect(reactionsInput.safeParse({ heart: [] }).success).toBe(false);
  });
});
