import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { getAccount } from '#shared/data/accounts';
import { corsOrigins } from '#shared/http/cors';
import { readValidatorConfig } from '#shared/email/validator/config';
import { writeFileAtomic } from './local/atomic-file.ts';
import { portInUse } from './local/ports.ts';
import { startLocalRuntime } from './local/runtime.ts';
import { seedDemo, type DemoSeed } from './local/seed.ts';
import { LOCAL_DIR, RUNTIME_FILE, type RuntimeFile } from './local/runtime-file.ts';
import { stopWithParent } from './local/stop-with-parent.ts';

const { values } = parseArgs({ options: { fresh: { type: 'boolean', default: false } } });
const DEMO_FILE = `${LOCAL_DIR}/demo.json`;
const ENV_FILE = `${LOCAL_DIR}/env`;

if (values.fresh) rmSync(LOCAL_DIR, { recursive: true, force: true });
mkdirSync(LOCAL_DIR, { recursive: true });

// Local runs may resolve MX hosts to loopback or private addresses (docs/configuration.md: allowed for local and test runs only).
process.env.ALLOW_PRIVATE_MX ??= 'true';

/** One line on stderr, then exit: what went wrong and what to do, never a stack trace. */
function fail(line: string): never {
  console.error(`npm start: ${line}`);
  process.exit(1);
}

const PORT_DEFAULTS = {
  MESSAGING_PORT: 3000,
  EMAIL_PORT: 3001,
  REALTIME_PORT: 3002,
  DYNAMODB_PORT: 8000,
  SQS_PORT: 9324,
  // s3rver's own default port, for tools already pointed at it.
  S3_PORT: 4568,
} as const;
// The messaging API's earlier name, still read for one release.
if (process.env.CHAT_PORT && !process.env.MESSAGING_PORT) process.env.MESSAGING_PORT = process.env.CHAT_PORT;
type PortVariable = keyof typeof PORT_DEFAULTS;
const ports = {} as Record<PortVariable, number>;
for (const [name, fallback] of Object.entries(PORT_DEFAULTS) as [PortVariable, number][]) {
  const raw = process.env[name]?.trim() || String(fallback);
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < 1 || value > 65535) fail(`${name}=${raw} is not a port number (1 to 65535)`);
  const clash = (Object.keys(ports) as PortVariable[]).find((other) => ports[other] === value);
  if (clash) fail(`${name} and ${clash} are both ${value}; give each its own port`);
  ports[name] = value;
}
const portInUseLine = (name: PortVariable) =>
  `port ${ports[name]} (${name}) is already in use, perhaps by another npm start; stop it, or choose another port: ${name}=<port> npm start`;
for (const name of Object.keys(ports) as PortVariable[]) if (await portInUse(ports[name])) fail(portInUseLine(name));
// Settings that cannot work stop the start here, in one line, instead of failing every request later.
try {
  corsOrigins();
  readValidatorConfig(process.env);
} catch (error) {
  fail((error as Error).message);
}

let stack: Awaited<ReturnType<typeof startLocalRuntime>>;
try {
  stack = await startLocalRuntime({
    dataDir: `${LOCAL_DIR}/dynamodb`,
    dynamoPort: ports.DYNAMODB_PORT,
    sqsPort: ports.SQS_PORT,
    s3Port: ports.S3_PORT,
    s3DataDir: `${LOCAL_DIR}/s3`,
    messagingPort: ports.MESSAGING_PORT,
    emailPort: ports.EMAIL_PORT,
    realtimePort: ports.REALTIME_PORT,
  });
} catch (error) {
  // Taken between the check above and the start.
  const { code, port: taken } = error as NodeJS.ErrnoException & { port?: number };
  const name = (Object.keys(ports) as PortVariable[]).find((n) => ports[n] === taken);
  if (code === 'EADDRINUSE' && name) fail(portInUseLine(name));
  console.error(`npm start failed: ${(error as Error).message}`);
  process.exit(1);
}

// Reuse the demo account kept with the data; seed a new one on a fresh start.
let demo: DemoSeed | undefined = existsSync(DEMO_FILE) ? JSON.parse(readFileSync(DEMO_FILE, 'utf8')) : undefined;
// A demo from before delivery (0.2) has no second token, one from before the platform endpoints (0.3) no secret key: seed a new one.
if (!demo || !demo.token2 || !demo.secretKey || !(await getAccount(demo.accountId))) {
  demo = await seedDemo();
  writeFileAtomic(DEMO_FILE, JSON.stringify(demo, null, 2));
}
const runtime: RuntimeFile = { pid: process.pid, env: stack.env };
writeFileAtomic(RUNTIME_FILE, JSON.stringify(runtime, null, 2));

const printed = {
  MESSAGING_BASE_URL: stack.messagingUrl!,
  EMAIL_BASE_URL: stack.emailUrl!,
  REALTIME_URL: stack.realtimeUrl!,
  DEMO_TOKEN: demo.token,
  DEMO_CONTACT_ID: demo.contactIds.bob,
  DEMO_TOKEN_2: demo.token2,
  DEMO_GROUP_ID: demo.groupId,
  DEMO_ACCOUNT_ID: demo.accountId,
  DEMO_SECRET_KEY: demo.secretKey,
  // The earlier name of MESSAGING_BASE_URL, kept for one release.
  CHAT_BASE_URL: stack.messagingUrl!,
};
// The same values for a shell: `source .local/env` (rewritten at every start).
writeFileAtomic(
  ENV_FILE,
  `# Written by npm start; load into a shell with: source ${ENV_FILE}\n${Object.entries(printed)
    .map(([name, value]) => `export ${name}=${value}`)
    .join('\n')}\n`,
);
// Printed once the file is there, so whoever reads the values can source it at once.
for (const [name, value] of Object.entries(printed)) console.log(`${name}=${value}`);
if (corsOrigins().length) console.log(`CORS allowed for: ${corsOrigins().join(', ')}`);
console.log(`Ready. Load these values into a shell with: source ${ENV_FILE}. Ctrl-C stops everything.`);

// Ctrl-C, an IDE's stop button (SIGTERM to npm), a closed terminal: all stop everything, Java included.
stopWithParent(async () => {
  rmSync(RUNTIME_FILE, { force: true });
  await stack.stop();
  process.exit(0);
});
