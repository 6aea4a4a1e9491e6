/**
 * Runs an npm script's command line on a Node that `engines` (package.json)
 * accepts, whatever Node the machine has: `npm start`, `npm test` and `npm run admin` go
 * through it.
 *
 *   node scripts/on-supported-node.js '<command line>' [the arguments npm appends]
 *
 * On such a Node (the `node` first on PATH, which runs this file) the line
 * runs as npm would run it. On an older one, the line runs with the official
 * binary of the `.nvmrc` major first on PATH, taken from the `node` package
 * on npm (kept in npx's cache, as `.ci/run` takes it), and one line on stderr
 * says so; every `node` the line starts (tsx, tsc, vitest, npm itself) is then
 * that one.
 *
 * Plain JavaScript importing only Node's own modules: the Node that runs it
 * may be too old for the project's tools (its test runs it on Node 20).
 *
 * The line's exit code (or the signal that ended it) is this process's.
 * SIGINT, SIGTERM and SIGHUP are passed on to the line's shell, and so is the
 * end of the process that started this one (SIGTERM then): npm passes a
 * signal to the shell it ran the script in, which dies without passing it on.
 * So the line's last command gets them too, the line says `exec` before it:
 * the shell then becomes that command.
 */
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { delimiter, dirname } from 'node:path';

const SIGNALS = /** @type {const} */ (['SIGINT', 'SIGTERM', 'SIGHUP']);
const name = process.env.npm_lifecycle_event ? `npm ${process.env.npm_lifecycle_event}` : 'on-supported-node';

/** @param {string} line @returns {never} */
function fail(line) {
  console.error(`${name}: ${line}`);
  process.exit(1);
}

/** @param {string} file */
const projectFile = (file) => readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');

/**
 * The oldest version a `>=major[.minor[.patch]]` range accepts.
 * @param {string} range
 * @returns {number[]}
 */
function floorOf(range) {
  const match = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(range.trim());
  if (!match) return fail(`engines.node in package.json must read ">=major[.minor[.patch]]", not "${range}"`);
  return match.slice(1).map((part) => Number(part ?? 0));
}

/** @param {string} version @param {number[]} floor */
function olderThan(version, floor) {
  const parts = version.split('.').map(Number);
  for (let i = 0; i < floor.length; i++) if (parts[i] !== floor[i]) return (parts[i] ?? 0) < (floor[i] ?? 0);
  return false;
}

/**
 * The official binary of a Node major and its version, from the npm `node` package through npx.
 * Only the path is taken: a line run under `npx -c` would inherit npx's settings (npm_config_call ...).
 * @param {string} major
 */
function officialNode(major) {
  const print = 'JSON.stringify([process.execPath, process.versions.node])';
  let out;
  try {
    out = execFileSync('npx', ['--yes', '--package', `node@${major}`, '--', 'node', '-p', print], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    const said = String(/** @type {{ stderr?: string }} */ (error).stderr ?? error)
      .trim()
      .split('\n')
      .at(-1);
    return fail(`Node ${major} (.nvmrc) could not be had from the npm \`node\` package (${said}); install Node ${major} and run again`);
  }
  const [path, version] = /** @type {[string, string]} */ (JSON.parse(out.trim().split('\n').at(-1) ?? ''));
  return { path, version };
}

const [line, ...args] = process.argv.slice(2);
if (!line) fail("usage: node scripts/on-supported-node.js '<command line>' [arguments]");

const range = JSON.parse(projectFile('package.json')).engines.node;
const floor = floorOf(range);
const env = { ...process.env };
if (olderThan(process.versions.node, floor)) {
  const major = projectFile('.nvmrc').trim();
  const node = officialNode(major);
  if (olderThan(node.version, floor)) fail(`.nvmrc names Node ${major}, older than engines.node (${range}) in package.json`);
  env.PATH = [dirname(node.path), env.PATH].join(delimiter);
  // What npm tells its scripts about the Node it runs on, told of the one the line runs on.
  env.NODE = env.npm_node_execpath = node.path;
  console.error(
    `${name}: Node ${process.versions.node} is older than engines.node (${range}): running on Node ${node.version} (.nvmrc major) from the npm \`node\` package`,
  );
}

// As npm runs a script: the line in a shell, the arguments after `--` appended.
const child = spawn('sh', ['-c', `${line} "$@"`, name, ...args], { env, stdio: 'inherit' });
/** @param {NodeJS.Signals} signal */
const pass = (signal) => void child.kill(signal);
for (const signal of SIGNALS) process.on(signal, pass);
const parent = process.ppid;
const orphaned = setInterval(() => {
  if (process.ppid === parent) return;
  clearInterval(orphaned);
  pass('SIGTERM');
}, 250);

child.once('error', (error) => fail(error.message));
child.once('exit', (code, signal) => {
  clearInterval(orphaned);
  if (!signal) process.exit(code ?? 1);
  // Ended by a signal: end the same way, so whoever started npm sees what the line saw.
  for (const s of SIGNALS) process.off(s, pass);
  process.kill(process.pid, signal);
  // A signal whose default is not to end a Node process (SIGPIPE): the shell's convention instead.
  setTimeout(() => process.exit(128 + (constants.signals[signal] ?? 0)), 100);
});
