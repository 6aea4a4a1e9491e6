import { monotonicFactory } from 'ulid';

/** Time-sortable ids: lexical order of the body equals creation order. */
const ulid = monotonicFactory();

export type IdPrefix = 'acct' | 'ct' | 'grp' | 'conv' | 'msg' | 'att' | 'tkn';

export const newId = (prefix: IdPrefix, now = Date.now()): string => `${prefix}_${ulid(now)}`;

const pattern = /^[a-z]+_[0-9A-HJKMNP-TV-Z]{26}$/;

/** Whether a string could be one of our ids of the given type (cheap guard before a read). */
export const looksLikeId = (prefix: IdPrefix, value: string): boolean => value.startsWith(`${prefix}_`) && pattern.test(value);

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);
