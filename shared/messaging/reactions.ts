import { z } from 'zod';
import type { ReactionEntry } from '#shared/data/messages';
import { badRequest } from '#shared/http/errors';

export const MAX_REACTION_NAMES = 50;
export const MAX_CONTACTS_PER_REACTION = 1000;

const segmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });
const isSingleEmoji = (name: string) =>
  [...segmenter.segment(name)].length === 1 && /\p{Extended_Pictographic}|\p{Regional_Indicator}/u.test(name);

export const reactionName = z
  .string()
  .refine((name) => /^[A-Za-z0-9_+-]{1,32}$/.test(name) || isSingleEmoji(name), {
    error: 'reaction names are 1 to 32 letters, digits, _, + or -, or a single emoji',
  });

const contactName = z.string().min(1, 'must not be empty').max(100, 'is too long');
/** `reactions[name][]=a` gives a list, `reactions[name]=a` a string, `reactions[name]=` unsets. */
const contactsValue = z.union([z.array(contactName).min(1, 'must name at least one contact').max(MAX_CONTACTS_PER_REACTION), z.literal(''), z.null(), contactName]);
const reactionMap = z.record(z.string(), contactsValue);

/** Accepts `{name: [...]}`, the documented array form `[{name: [...]}]`, or an empty value to clear all. */
export const reactionsInput = z.union([z.literal(''), z.null(), reactionMap, z.array(reactionMap).max(MAX_REACTION_NAMES)]);
export type ReactionsInput = z.infer<typeof reactionsInput>;

export type ReactionChange = { name: string; add: string[] } | { name: string; remove: true };

/** Turns any accepted input shape into an ordered list of changes (null: clear all). */
export function reactionChanges(input: ReactionsInput): ReactionChange[] | null {
  if (input === '' || input === null) return null;
  const maps = Array.isArray(input) ? input : [input];
  const changes: ReactionChange[] = [];
  for (const map of maps) {
    for (const [name, value] of Object.entries(map)) {
      const parsed = reactionName.safeParse(name);
      if (!parsed.success) throw badRequest(`Invalid reaction name '${name}': ${parsed.error.issues[0]!.message}`, `reactions[${name}]`);
      if (value === '' || value === null) changes.push({ name, remove: true });
      else changes.push({ name, add: Array.isArray(value) ? value : [value] });
    }
  }
  return changes;
}

/** Applies changes as set unions in first-added order; never mutates `current`. */
export function applyReactions(current: ReactionEntry[], changes: ReactionChange[] | null): ReactionEntry[] {
  if (changes === null) return [];
  const next = current.map((entry) => ({ name: entry.name, contacts: [...entry.contacts] }));
  for (const change of changes) {
    const index = next.findIndex((entry) => entry.name === change.name);
    if ('remove' in change) {
      if (index >= 0) next.splice(index, 1);
      continue;
    }
    const entry = index >= 0 ? next[index]! : { name: change.name, contacts: [] };
    if (index < 0) next.push(entry);
    for (const contact of change.add) if (!entry.contacts.includes(contact)) entry.contacts.push(contact);
    if (entry.contacts.length > MAX_CONTACTS_PER_REACTION) {
      throw badRequest(`A reaction can name at most ${MAX_CONTACTS_PER_REACTION} contacts`, `reactions[${change.name}]`);
    }
  }
  if (next.length > MAX_REACTION_NAMES) {
    throw badRequest(`A message can have at most ${MAX_REACTION_NAMES} reaction names`, 'reactions');
  }
  return next;
}

/** The wire form: one single-key object per reaction, in order. */
export const presentReactions = (entries: ReactionEntry[]) => entries.map((e) => ({ [e.name]: e.contacts }));
