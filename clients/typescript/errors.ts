import type { ErrorBody } from './types.ts';

/** An error answer of either API: its status and the envelope's `type`, `code` and `param`. */
export class ApiError extends Error {
  readonly status: number;
  readonly type: string | undefined;
  readonly code: string | undefined;
  readonly param: string | undefined;
  /** The body as answered (the error envelope, or whatever a proxy answered instead). */
  readonly body: unknown;

  constructor(status: number, body: unknown) {
    const error = (body as Partial<ErrorBody> | undefined)?.error;
    super(error?.message ?? `HTTP ${status}`);
    this.name = 'ApiError';
    this.status = status;
    this.type = error?.type;
    this.code = error?.code;
    this.param = error?.param;
    this.body = body;
  }
}

/**
 * `410 cursor_expired`: the events after the cursor are no longer all kept.
 * Nothing can be resumed from it: read the state again, then follow the
 * events from then on.
 */
export class CursorExpiredError extends ApiError {
  constructor(status: number, body: unknown) {
    super(status, body);
    this.name = 'CursorExpiredError';
  }
}

/** The error of an answer, as the class a caller can tell apart with `instanceof`. */
export function apiError(status: number, body: unknown): ApiError {
  const error = new ApiError(status, body);
  return status === 410 && error.code === 'cursor_expired' ? new CursorExpiredError(status, body) : error;
}

/** The answer's data when it succeeded, else its error thrown: for callers that would rather catch than branch. */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.error !== undefined || !result.response.ok) throw apiError(result.response.status, result.error);
  return result.data as T;
}

/** A frame the realtime API sent to say a request of the client's was refused (`{"type":"error"}`). */
export class RealtimeRefusal extends Error {
  readonly code: string | undefined;
  readonly param: string | undefined;

  constructor(error: { code?: string; message?: string; param?: string } | undefined) {
    super(error?.message ?? 'the realtime API refused a request');
    this.name = 'RealtimeRefusal';
    this.code = error?.code;
    this.param = error?.param;
  }
}
