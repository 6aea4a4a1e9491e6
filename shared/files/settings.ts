/** Largest upload by default (MAX_FILE_BYTES): 25 MiB. */
export const DEFAULT_MAX_FILE_BYTES = 25 * 1024 * 1024;
/** S3 takes up to 5 GB in one PUT; the setting cannot go past it. */
const PUT_LIMIT_BYTES = 5 * 1024 ** 3;
/** A list's CSV export (record and object) lasts this long: the bucket's lifecycle rule for `exports/` is built from it. */
export const EXPORT_RETENTION_DAYS = 7;
/** How long an upload URL and a download URL stay valid: the contract's hour at most. */
export const URL_SECONDS = 3_600;

export function maxFileBytes(): number {
  const value = Number(process.env.MAX_FILE_BYTES);
  return Number.isInteger(value) && value >= 1 && value <= PUT_LIMIT_BYTES ? value : DEFAULT_MAX_FILE_BYTES;
}

/**
 * The content types an upload may declare (FILE_CONTENT_TYPES, comma
 * separated; `image/*` takes a whole family); empty takes any.
 */
export function contentTypeAllowed(contentType: string): boolean {
  const allowed = (process.env.FILE_CONTENT_TYPES ?? '')
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter(Boolean);
  if (allowed.length === 0) return true;
  const type = contentType.toLowerCase();
  return allowed.some((entry) => (entry.endsWith('/*') ? type.startsWith(entry.slice(0, -1)) : type === entry));
}
