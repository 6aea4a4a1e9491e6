import * as v from 'valibot';
import type { ReactionEntry } from '#shared/data/message-items';
import type { ReactionOp } from '#shared/data/message-writes';
import { invalid } from '#shared/errors';
import { elementBytes } from '#shared/messaging/size';
import { nested } from '#shared/util/object-schema';
import { propertyPattern } from '#shared/util/property-pattern';

export const MAX_REACTION_NAMES = 50;
export const MAX_CONTACTS_PER_REACTION = 1000;

const PICTOGRAPHIC = propertyPattern('\\p{Extended_Pictographic}|\\p{Regional_Indicator}');

/** A keycap (1️⃣, #️⃣, *️⃣): an emoji made of a digit, # or * and the combining keycap, none of them pictographic. */
const KEYCAP = /^[\d#*]\uFE0F?\u20E3$/;

/** UTF-16 units of the longest single emoji worth segmenting (a ZWJ family or a tag-sequence flag is about 20). */
const MAX_EMOJI_UNITS = 64;

// Made on first use: constructing a segmenter loads ICU break data (tens of ms), a cost every cold start would pay.
let segmenter: Intl.Segmenter | undefined;
const isSingleEmoji = (name: string) =>
  KEYCAP.test(name) ||
  (name.length <= MAX_EMOJI_UNITS &&
    [...(segmenter ??= new Intl.Segmenter('en', { granularity: 'grapheme' })).segment(name)].length === 1 &&
    PICTOGRAPHIC.test(name));

// Schemas are built in /* @__PURE__ */ calls so that esbuild drops them from handlers that never use them (docs/performance.md).
export const reactionName = /* @__PURE__ */ (() =>
  v.pipe(
    v.string(),
    v.check(
      (name) => /^[A-Za-z0-9_+-]{1,32}$/.test(name) || isSingleEmoji(name),
      'reaction names are 1 to 32 letters, digits, _, + or -, or a single emoji',
    ),
  ))();

/** `reactions[name][]=a` gives a list, `reactions[name]=a` a string, `reactions[name]=` unsets. */
const contactName = /* @__PURE__ */ (() => v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(100, 'is too long')))();
const reactionMap = /* @__PURE__ */ (() =>
  nested(
    v.record(
      v.string(),
      v.union([
        v.pipe(
          v.array(contactName),
          v.minLength(1, 'must name at least one contact'),
          v.maxLength(MAX_CONTACTS_PER_REACTION, `must name at most ${MAX_CONTACTS_PER_REACTION} contacts`),
        ),
        v.literal(''),
        v.null(),
        contactName,
      ]),
    ),
  ))();

const tooManyNames = `a request can name at most ${MAX_REACTION_NAMES} reactions`;

/**
 * Accepts `{name: [...]}`, the documented array form `[{name: [...]}]`, or an
 * empty value to clear all. A request names at most 50 reactions and 1,000
 * contacts per name, so everything after the schema is bounded.
 */
export const reactionsInput = /* @__PURE__ */ (() =>
  v.pipe(
    v.union([v.literal(''), v.null(), reactionMap, v.pipe(v.array(reactionMap), v.maxLength(MAX_REACTION_NAMES, tooManyNames))]),
    v.check(
      (input) =>
        !input || (Array.isArray(input) ? input : [input]).reduce((n, map) => n + Object.keys(map).length, 0) <= MAX_REACTION_NAMES,
      tooManyNames,
    ),
  ))();
export type ReactionsInput = v.InferOutput<typeof reactionsInput>;

export type ReactionChange = { name: string; add: string[] } | { name: string; remove: true };

/** Turns any accepted input shape into an ordered list of changes (null: clear all). */
export function reactionChanges(input: ReactionsInput): ReactionChange[] | null {
  if (input === '' || input === null) return null;
  const maps = Array.isArray(input) ? input : [input];
  const changes: ReactionChange[] = [];
  for (const map of maps) {
    for (const [name, value] of Object.entries(map)) {
      const parsed = v.safeParse(reactionName, name);
      if (!parsed.success) throw invalid(`Invalid reaction name '${name}': ${parsed.issues[0].message}`, `reactions[${name}]`);
      if (value === '' || value === null) changes.push({ name, remove: true });
      else changes.push({ name, add: Array.isArray(value) ? value : [value] });
    }
  }
  return changes;
}

export interface ReactionsPlan {
  clearAll: boolean;
  ops: ReactionOp[];
  /** Names the plan adds minus existing names it removes, against the message as read. */
  namesAdded: number;
  /** Change of the message's encoded size (see size.ts). */
  bytesDelta: number;
}

const nameBytes = (name: string) => elementBytes({ [name]: [] });
export const reactionsBytes = (entries: ReactionEntry[]) =>
  entries.reduce((n, e) => n + nameBytes(e.name) + e.contacts.reduce((m, c) => m + elementBytes(c), 0), 0);

/**
 * Plans the changes against the message as read: only contacts not yet
 * there are appended, and the caps are checked on the result (400 naming
 * the reaction). The caps are checked again by the write's condition, so a
 * concurrent request cannot push the message past them either.
 */
export function planReactions(current: ReactionEntry[], changes: ReactionChange[] | null): ReactionsPlan {
  if (changes === null) {
    return { clearAll: current.length > 0, ops: [], namesAdded: 0, bytesDelta: -reactionsBytes(current) };
  }
  // Fold the request per name, in order: a removal resets what came before it.
  const folded = new Map<string, { removed: boolean; add: Set<string> }>();
  for (const change of changes) {
    const entry = folded.get(change.name) ?? { removed: false, add: new Set<string>() };
    if ('remove' in change) folded.set(change.name, { removed: true, add: new Set() });
    else {
      for (const contact of change.add) entry.add.add(contact);
      folded.set(change.name, entry);
    }
  }
  const existing = new Map(current.map((e) => [e.name, e]));
  const ops: ReactionOp[] = [];
  let namesAdded = 0;
  let bytesDelta = 0;
  for (const [name, { removed, add }] of folded) {
    const before = existing.get(name);
    const beforeBytes = before ? reactionsBytes([before]) : 0;
    let contactsAfter: number;
    if (removed) {
      if (add.size === 0 && !before) continue;
      const contacts = [...add];
      ops.push(add.size === 0 ? { kind: 'remove', name } : { kind: 'replace', name, contacts });
      bytesDelta += (add.size === 0 ? 0 : reactionsBytes([{ name, contacts }])) - beforeBytes;
      namesAdded += (add.size > 0 ? 1 : 0) - (before ? 1 : 0);
      contactsAfter = add.size;
    } else {
      const known = new Set(before?.contacts ?? []);
      const fresh = [...add].filter((c) => !known.has(c));
      if (fresh.length === 0) continue;
      ops.push({ kind: 'add', name, contacts: fresh });
      bytesDelta += (before ? 0 : nameBytes(name)) + fresh.reduce((n, c) => n + elementBytes(c), 0);
      namesAdded += before ? 0 : 1;
      contactsAfter = known.size + fresh.length;
    }
    if (contactsAfter > MAX_CONTACTS_PER_REACTION) {
      throw invalid(`A reaction can name at most ${MAX_CONTACTS_PER_REACTION} contacts`, `reactions[${name}]`);
    }
  }
  if (current.length + namesAdded > MAX_REACTION_NAMES) {
    throw invalid(`A message can have at most ${MAX_REACTION_NAMES} reaction names`, 'reactions');
  }
  return { clearAll: false, ops, namesAdded, bytesDelta };
}

/** The wire form: one single-key object per reaction, in order. */
export const presentReactions = (entries: ReactionEntry[]) => entries.map((e) => ({ [e.name]: e.contacts }));
