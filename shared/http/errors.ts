import { DomainError } from '#shared/errors';

/**
 * Typed errors of the HTTP layer (and the domain's, mapped by `fromDomain`);
 * the error middleware turns them, and only them, into the API's error
 * envelope. Anything else becomes an opaque 500.
 */
export type ErrorType = 'invalid_request_error' | 'authentication_error' | 'rate_limit_error' | 'api_error';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  get type(): ErrorType {
    if (this.status === 401) return 'authentication_error';
    if (this.status === 429) return 'rate_limit_error';
    if (this.status >= 500) return 'api_error';
    return 'invalid_request_error';
  }

  toBody() {
    return {
      error: {
        type: this.type,
        code: this.code,
        message: this.message,
        ...(this.param === undefined ? {} : { param: this.param }),
      },
    };
  }
}

export const badRequest = (message: string, param?: string, code = 'parameter_invalid') => new ApiError(400, code, message, param);

export const unauthorized = (message = 'Invalid or missing bearer token') =>
  new ApiError(401, 'unauthorized', message, undefined, { 'WWW-Authenticate': 'Bearer' });

export const unprocessable = (message: string, code = 'unprocessable') => new ApiError(422, code, message);

export const internal = () => new ApiError(500, 'internal_error', 'An internal error occurred');

const statusOf = { not_found: 404, invalid: 400, conflict: 409, forbidden: 403, gone: 410 } as const;

/** The HTTP answer to a domain error. */
export const fromDomain = (error: DomainError) =>
  error.kind === 'unauthenticated'
    ? unauthorized(error.message)
    : new ApiError(statusOf[error.kind], error.code, error.message, error.param);

/** The error as the API answers it, when it is one it answers (not an unexpected failure). */
export const asApiError = (error: unknown): ApiError | undefined =>
  error instanceof ApiError ? error : error instanceof DomainError ? fromDomain(error) : undefined;
