/** How long events stay readable (EVENT_RETENTION_DAYS, default 30): an `after` older than this is `410 cursor_expired`. */
export const DEFAULT_EVENT_RETENTION_DAYS = 30;
/** A year: a feed read from further back is a full re-read anyway. */
export const MAX_EVENT_RETENTION_DAYS = 365;

export function retentionDays(): number {
  const days = Number(process.env.EVENT_RETENTION_DAYS);
  return Number.isInteger(days) && days >= 1 && days <= MAX_EVENT_RETENTION_DAYS ? days : DEFAULT_EVENT_RETENTION_DAYS;
}

export const retentionMs = () => retentionDays() * 86_400_000;
