import { logger } from '#shared/util/logger';

/** One parsed JSON log line; `any` keeps the assertions short. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type LogLine = Record<string, any>;

export interface CapturedLogs {
  /** Every JSON line written to stdout or stderr since the capture started. */
  lines(): LogLine[];
  /** Whatever was written that is not a JSON object (should stay empty). */
  other(): string[];
  stop(): void;
}

/**
 * Captures what this process writes to stdout and stderr (the logger prints
 * there, as on Lambda) with logging turned on at `level`; `stop` restores
 * both streams and the level the run started with.
 */
export function captureLogs(level = 'info'): CapturedLogs {
  const chunks: string[] = [];
  const streams = [process.stdout, process.stderr];
  const originals = streams.map((stream) => stream.write);
  for (const stream of streams) {
    stream.write = ((chunk: string | Uint8Array) => {
      chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    }) as typeof stream.write;
  }
  logger.setLevel(level);
  const all = () =>
    chunks
      .join('')
      .split('\n')
      .filter((line) => line.trim() !== '');
  const parse = (line: string): LogLine | undefined => {
    try {
      const value = JSON.parse(line);
      return value && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
    } catch {
      return undefined;
    }
  };
  return {
    lines: () => all().flatMap((line) => parse(line) ?? []),
    other: () => all().filter((line) => parse(line) === undefined),
    stop() {
      streams.forEach((stream, i) => (stream.write = originals[i]!));
      logger.setLevel(process.env.LOG_LEVEL || 'info');
    },
  };
}
