import { renameSync, writeFileSync } from 'node:fs';

/**
 * Writes `file` whole or not at all: the text goes to a file beside it, which
 * then takes its name. A process killed mid-write (a SIGKILL of npm start)
 * leaves the previous file, never half of one: a truncated checkpoint made
 * the next `npm start` fail to parse it.
 */
export function writeFileAtomic(file: string, text: string): void {
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, text);
  renameSync(temp, file);
}
