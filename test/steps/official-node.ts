import { execFileSync } from 'node:child_process';

/**
 * The official binary of a Node major, from the `node` package on npm (kept in npx's cache, as `.ci/run` and the
 * benches take it): the path only, since a command run under `npx -c` would inherit npx's settings.
 */
export const officialNode = (major: number): string =>
  execFileSync('npx', ['--yes', '--package', `node@${major}`, '--', 'node', '-p', 'process.execPath'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
