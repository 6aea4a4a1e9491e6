import { notFound } from '#shared/errors';
import { looksLikeId, type IdPrefix } from '#shared/util/ids';

/**
 * The resource ids of a request path, parsed. A path whose id cannot be one
 * answers 404 before the domain runs, exactly as an unknown id does.
 */
export interface PathId<T> {
  read: (params: Record<string, string | undefined>) => T;
}

/** One path parameter: its name, the resource it names (for the 404) and its parser. */
function segment<T>(name: string, resource: string, parse: (raw: string) => T | undefined): PathId<T> {
  return {
    read: (params) => {
      const raw = params[name] ?? '';
      const id = parse(raw);
      if (id === undefined) throw notFound(resource, raw, name);
      return id;
    },
  };
}

/** Two ids of one path (`/v1/groups/{id}/members/{contact_id}`), read in order: the parent's 404 comes first. */
export const pathPair = <A, B>(first: PathId<A>, second: PathId<B>): PathId<[A, B]> => ({
  read: (params) => [first.read(params), second.read(params)],
});

/** Numeric ids of the email API: 1 to 16 digits, no leading zero, a safe integer. */
const numeric = (raw: string) => (/^[1-9]\d{0,15}$/.test(raw) && Number.isSafeInteger(Number(raw)) ? Number(raw) : undefined);

const prefixed =
  (...prefixes: IdPrefix[]) =>
  (raw: string) =>
    prefixes.some((prefix) => looksLikeId(prefix, raw)) ? raw : undefined;

export const emailId = segment('id', 'email', numeric);
export const emailListId = segment('id', 'email list', numeric);
/** An export of an email list (`/api/v1/emailList/{id}/exports/{exportId}`): the list's 404 first. */
export const listExportId = pathPair(emailListId, segment('exportId', 'export', prefixed('exp')));
export const conversationId = segment('id', 'conversation', prefixed('conv'));
export const messageId = segment('id', 'message', prefixed('msg'));
export const fileId = segment('id', 'file', prefixed('file'));
export const contactId = segment('id', 'contact', prefixed('ct'));
export const groupId = segment('id', 'group', prefixed('grp'));
export const webhookEndpointId = segment('id', 'webhook endpoint', prefixed('whk'));
/** Tokens issued before 0.4 have `tkn_` ids. */
export const tokenId = segment('token_id', 'token', prefixed('tok', 'tkn'));
export const memberId = segment('contact_id', 'member', prefixed('ct'));
/** `/api/v1/emailList/{id}/imports/{importId}`: the list, then its import. */
export const listImportIds = pathPair(emailListId, segment('importId', 'import', prefixed('imp')));
