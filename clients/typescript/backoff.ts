export interface BackoffOptions {
  /** The scale of the first retry's delay, in ms (default 500). */
  initialMs?: number;
  /** No delay is longer than this, in ms (default 30,000). */
  maxMs?: number;
  /** A connection that stays open this long was healthy: the next retry starts from `initialMs` again (default 10,000). */
  healthyAfterMs?: number;
}

export const DEFAULT_BACKOFF: Required<BackoffOptions> = { initialMs: 500, maxMs: 30_000, healthyAfterMs: 10_000 };

/**
 * The delay before retry number `attempt` (0 for the first). The step
 * doubles up to `maxMs`; half of it is kept and the other half drawn at
 * random ("equal jitter"), so the clients a server outage disconnected at
 * once do not all come back at once, yet each one's delays still grow.
 */
export function backoffDelay(
  attempt: number,
  { initialMs, maxMs }: Pick<Required<BackoffOptions>, 'initialMs' | 'maxMs'>,
  random = Math.random,
) {
  const step = Math.min(maxMs, initialMs * 2 ** attempt);
  return step / 2 + (random() * step) / 2;
}
