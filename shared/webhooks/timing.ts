/**
 * Seconds after the first attempt at which a failed event is tried again
 * (docs/webhooks.md). `WEBHOOK_RETRY_SECONDS` (comma-separated)
 * replaces it, so a test sees the third attempt in seconds.
 */
export const RETRY_SECONDS = [5, 30, 120, 900, 3600, 14_400, 43_200, 86_400];

export function retrySchedule(): number[] {
  const raw = process.env.WEBHOOK_RETRY_SECONDS;
  if (!raw) return RETRY_SECONDS;
  const parsed = raw.split(',').map(Number);
  return parsed.every((n) => Number.isFinite(n) && n >= 0) ? parsed : RETRY_SECONDS;
}

/** An endpoint failing every attempt for this long is disabled. */
export const DISABLE_AFTER_SECONDS = 3 * 24 * 3600;
/** How long the previous secret keeps signing after a rotation. */
export const ROTATION_OVERLAP_SECONDS = 24 * 3600;
/** Per attempt: any 2xx within this time is success. */
export const ATTEMPT_TIMEOUT_MS = 10_000;
