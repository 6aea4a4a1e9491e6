import { looksLikeId, type IdPrefix } from '#shared/util/ids';

/**
 * A resource id taken from the request path: the route's parameter name, the
 * resource it names (for the 404), and its parser. A path whose id cannot be
 * one answers 404 before the domain runs, exactly as an unknown id does.
 */
export interface PathId<T> {
  name: string;
  resource: string;
  parse: (raw: string) => T | undefined;
}

/** Numeric ids of the email API: 1 to 16 digits, no leading zero, a safe integer. */
const numeric = (raw: string) => (/^[1-9]\d{0,15}$/.test(raw) && Number.isSafeInteger(Number(raw)) ? Number(raw) : undefined);

const prefixed = (prefix: IdPrefix) => (raw: string) => (looksLikeId(prefix, raw) ? raw : undefined);

export const emailId: PathId<number> = { name: 'id', resource: 'email', parse: numeric };
export const emailListId: PathId<number> = { name: 'id', resource: 'email list', parse: numeric };
export const conversationId: PathId<string> = { name: 'id', resource: 'conversation', parse: prefixed('conv') };
export const messageId: PathId<string> = { name: 'id', resource: 'message', parse: prefixed('msg') };
