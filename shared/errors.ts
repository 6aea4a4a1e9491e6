/**
 * What the domain reports when a request cannot be done: a missing record,
 * an input the rules refuse, a conflict with the record's state. The domain
 * knows nothing of HTTP; the error middleware (`shared/http/middleware.ts`)
 * maps each kind to its status and the API's error envelope.
 */
export class DomainError extends Error {
  constructor(
    readonly kind: 'not_found' | 'invalid' | 'conflict' | 'forbidden' | 'gone' | 'unauthenticated',
    readonly code: string,
    message: string,
    /** The request parameter at fault, when there is one. */
    readonly param?: string,
  ) {
    super(message);
  }
}

/** A record that does not exist for the caller (never existed, another tenant's, deleted). */
export const notFound = (what: string, id: string, param?: string) =>
  new DomainError('not_found', 'resource_missing', id === '' ? `No such ${what}` : `No such ${what}: '${id}'`, param);

/** An input the rules refuse. */
export const invalid = (message: string, param?: string, code = 'parameter_invalid') => new DomainError('invalid', code, message, param);

/** A request that conflicts with the record's current state. */
export const conflict = (message: string, code = 'conflict') => new DomainError('conflict', code, message);

/** A record the caller may see but not change this way (another participant's message). */
export const forbidden = (message: string, param?: string) => new DomainError('forbidden', 'permission_denied', message, param);

/** A credential that stopped being valid while the request ran (its contact was deleted). */
export const unauthenticated = (message: string) => new DomainError('unauthenticated', 'unauthorized', message);

/** A cursor past what is kept: the client starts over from a fresh read. */
export const gone = (message: string, param?: string, code = 'cursor_expired') => new DomainError('gone', code, message, param);
