import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { getAccount } from '#shared/data/accounts';
import { startLocalStack } from './local/runtime.ts';
import { seedDemo, type DemoSeed } from './local/seed.ts';
import { LOCAL_DIR, RUNTIME_FILE, type RuntimeFile } from './local/runtime-file.ts';

// The SDK warns about Node 20 on every client; Lambda runs the major in .nvmrc and the warning says nothing actionable here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const { values } = parseArgs({ options: { fresh: { type: 'boolean', default: false } } });
const DEMO_FILE = `${LOCAL_DIR}/demo.json`;

if (values.fresh) rmSync(LOCAL_DIR, { recursive: true, force: true });
mkdirSync(LOCAL_DIR, { recursive: true });

// Local runs may resolve MX hosts to loopback or private addresses (the contract allows it for local and test runs).
process.env.ALLOW_PRIVATE_MX ??= 'true';

const port = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

let stack: Awaited<ReturnType<typeof startLocalStack>>;
try {
  stack = await startLocalStack({
    dataDir: `${LOCAL_DIR}/dynamodb`,
    dynamoPort: port('DYNAMODB_PORT', 8000),
    sqsPort: port('SQS_PORT', 9324),
    chatPort: port('CHAT_PORT', 3000),
    emailPort: port('EMAIL_PORT', 3001),
  });
} catch (error) {
  console.error(`npm start failed: ${(error as Error).message}`);
  process.exit(1);
}

// Reuse the demo account kept with the data; seed a new one on a fresh start.
let demo: DemoSeed | undefined = existsSync(DEMO_FILE) ? JSON.parse(readFileSync(DEMO_FILE, 'utf8')) : undefined;
if (!demo || !(await getAccount(demo.accountId))) {
  demo = await seedDemo();
  writeFileSync(DEMO_FILE, JSON.stringify(demo, null, 2));
}
const runtime: RuntimeFile = { pid: process.pid, env: stack.env };
writeFileSync(RUNTIME_FILE, JSON.stringify(runtime, null, 2));

console.log(`CHAT_BASE_URL=${stack.chatUrl}`);
console.log(`EMAIL_BASE_URL=${stack.emailUrl}`);
console.log(`DEMO_TOKEN=${demo.token}`);
console.log(`DEMO_CONTACT_ID=${demo.contactIds.bob}`);
console.log(`DEMO_GROUP_ID=${demo.groupId}`);
console.log(`DEMO_ACCOUNT_ID=${demo.accountId}`);
console.log('Ready. Ctrl-C stops everything.');

let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  rmSync(RUNTIME_FILE, { force: true });
  await stack.stop();
  process.exit(0);
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
