/**
 * The admin command line: `npm run -s admin -- <command> [flags]`.
 *
 * Every call prints exactly one JSON object on stdout (the result, or
 * `{"error": {"message": ...}}`); anything meant for people goes to stderr.
 * Exit codes: 0 success, 1 not found or failure, 2 usage error. `help`
 * (or `--help`) prints the usage on stdout instead and exits 0.
 *
 * Target: `--table`/`--region` (or TABLE_NAME without a running `npm start`)
 * select a deployed table through the normal AWS credential chain; otherwise
 * the stack `npm start` is running, found through its runtime file.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { config, resetConfig } from '#shared/config';
import { creditBalance } from '#shared/data/accounts';
import { resumeAwaiting } from '#shared/email/outbox';
import { addCredits, createAccount, getAccount, setAccountLimits } from '#shared/data/accounts';
import { createContact, getContact } from '#shared/data/contacts';
import { createGroup, getGroup, groupAccountOf } from '#shared/data/groups';
import { addMember, groupMembers, MAX_GROUP_MEMBERS, removeMember } from '#shared/data/group-members';
import { issueTokenWithId, listTokens, revokeToken, revokeTokenById, TOKEN_PATTERN } from '#shared/data/tokens';
import { looksLikeId } from '#shared/util/ids';
import {
  createWebhook,
  listWebhooks,
  parseEventTypes,
  removeWebhook,
  rotateWebhookSecret,
  webhookDeliveries,
  WebhookInputError,
} from '#shared/webhooks/manage';
import { resetDb } from '#shared/db/client';
import { MAX_RATE_LIMIT, type RateLimits } from '#shared/rate-limits';
import { RUNTIME_FILE, type RuntimeFile } from './local/runtime-file.ts';
import { useBackends } from './local/runtime.ts';
import { migrateThreads } from './migrations/threads.ts';
import { UsagePlans } from './usage-plans.ts';

// The SDK warns about Node 20 on every client; Lambda runs the major in .nvmrc and the warning says nothing actionable here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const USAGE = `usage: npm run -s admin -- <command> [flags]   (-s keeps npm's own banner off stdout)

commands:
  account create --name N [--credits C]     on AWS also gives the account its API key in the default usage plan
  account limits --account A (--rate R --burst B | --default true)
                                            the account's own rate limit across both APIs (requests/s, burst),
                                            or back to the deployment's default
  contact create --account A --username U [--phone P] [--avatar-url URL]
  group create   --account A --name N
  group add-member    --group G --contact C [--account A]   up to ${MAX_GROUP_MEMBERS} members a group
  group remove-member --group G --contact C [--account A]
  group members       --group G [--account A]                the members' contact ids
  token create   --account A --contact C     prints the token (shown only here) and its id
  token list     --account A                ids, contacts, creation and revocation times; never a token
  token revoke   --id ID | --token T
  help           this text (also --help)
  credits add    --account A --amount N
  webhook create --account A --url URL [--events type,type]   prints the id and the secret (shown only here)
  webhook list   --account A
  webhook delete --id ID
  webhook rotate-secret --id ID              a new secret; the old one also signs for 24 h
  webhook deliveries    --id ID              recent attempts, newest first
  migrate threads                            0.2 → 0.3: moves each 0.2 message into its thread (idempotent)

target (default: the stack \`npm start\` is running, via ${RUNTIME_FILE}):
  --table NAME --region R   a deployed table (or set TABLE_NAME / AWS_REGION),
                            using the normal AWS credential chain
  --stack NAME              the deployed stack's name, for its usage plans
                            (default: STACK_NAME, else serverless-messaging)

Prints one JSON object on stdout. Exit codes: 0 ok, 1 not found/failure, 2 usage error.`;

class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2,
  ) {
    super(message);
  }
}
const usageError = (message: string) => new CliError(message, 2);
const notFound = (message: string) => new CliError(message, 1);

type Flags = Record<string, string | undefined>;

interface Command {
  flags: string[];
  required: string[];
  run: (flags: Flags) => Promise<Record<string, unknown>>;
}

/** A non-negative integer flag value, or a usage error. */
function count(flags: Flags, name: string): number | undefined {
  const raw = flags[name];
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value)) throw usageError(`--${name} must be a non-negative integer, got "${raw}"`);
  return value;
}

/** The account of the group named by --group: --account when given, else the group's own index entry. */
async function groupAccount(f: Flags): Promise<string> {
  const accountId = f.account ?? (await groupAccountOf(f.group!));
  if (!accountId || !(await getGroup(accountId, f.group!)))
    throw notFound(`group ${f.group} not found${f.account ? ` in account ${f.account}` : ''}`);
  return accountId;
}

async function requireAccount(accountId: string) {
  const account = await getAccount(accountId);
  if (!account) throw notFound(`account ${accountId} not found`);
  return account;
}

/** A positive number flag value (integer when `integer`), at most API Gateway's account limit, or a usage error. */
function limit(flags: Flags, name: string, integer: boolean): number | undefined {
  const raw = flags[name];
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || value > MAX_RATE_LIMIT || (integer && !Number.isInteger(value))) {
    throw usageError(`--${name} must be a positive ${integer ? 'integer' : 'number'} up to ${MAX_RATE_LIMIT}, got "${raw}"`);
  }
  return value;
}

/** Set when the target is a deployed stack: its usage plans carry the limits there. */
let usagePlans: UsagePlans | undefined;

const commands: Record<string, Command> = {
  'account create': {
    flags: ['name', 'credits'],
    required: ['name'],
    run: async (f) => {
      const account = await createAccount({ name: f.name!, credits: count(f, 'credits') });
      const plan = usagePlans ? await usagePlans.enable(account.account_id) : {};
      return { account_id: account.account_id, ...plan };
    },
  },
  'account limits': {
    flags: ['account', 'rate', 'burst', 'default'],
    required: ['account'],
    run: async (f) => {
      const own = f.rate !== undefined || f.burst !== undefined;
      if (own === (f.default !== undefined) || (own && (f.rate === undefined || f.burst === undefined))) {
        throw usageError('account limits needs --rate and --burst, or --default true');
      }
      if (f.default !== undefined && f.default !== 'true') throw usageError('--default takes only "true"');
      const limits: RateLimits | undefined = own
        ? { rateLimit: limit(f, 'rate', false)!, burstLimit: limit(f, 'burst', true)! }
        : undefined;
      await requireAccount(f.account!);
      // The table first: the local gateway reads it, and it records the intent if the AWS calls fail halfway.
      await setAccountLimits(f.account!, limits);
      const plan = usagePlans ? await usagePlans.setLimits(f.account!, limits) : {};
      // The default is a deploy setting (or npm start's ACCOUNT_RATE_LIMIT/ACCOUNT_BURST_LIMIT): not known here.
      const ownLimits = limits ? { rate_limit: limits.rateLimit, burst_limit: limits.burstLimit } : null;
      return { account_id: f.account!, own_limits: ownLimits, ...plan };
    },
  },
  'contact create': {
    flags: ['account', 'username', 'phone', 'avatar-url'],
    required: ['account', 'username'],
    run: async (f) => {
      await requireAccount(f.account!);
      const contact = await createContact({
        accountId: f.account!,
        username: f.username!,
        phoneNumber: f.phone,
        avatarUrl: f['avatar-url'],
      });
      return { contact_id: contact.id };
    },
  },
  'group create': {
    flags: ['account', 'name'],
    required: ['account', 'name'],
    run: async (f) => {
      await requireAccount(f.account!);
      const group = await createGroup({ accountId: f.account!, name: f.name! });
      return { group_id: group.id };
    },
  },
  'group add-member': {
    flags: ['account', 'group', 'contact'],
    required: ['group', 'contact'],
    run: async (f) => {
      const accountId = await groupAccount(f);
      if (!(await getContact(accountId, f.contact!))) throw notFound(`contact ${f.contact} not found in account ${accountId}`);
      const outcome = await addMember(accountId, f.group!, f.contact!);
      if (outcome === 'no_group') throw notFound(`group ${f.group} not found in account ${accountId}`);
      if (outcome === 'full') throw new CliError(`group ${f.group} has ${MAX_GROUP_MEMBERS} members already`, 1);
      return { group_id: f.group, contact_id: f.contact, added: outcome === 'added' };
    },
  },
  'group remove-member': {
    flags: ['account', 'group', 'contact'],
    required: ['group', 'contact'],
    run: async (f) => {
      const accountId = await groupAccount(f);
      const removed = await removeMember(accountId, f.group!, f.contact!);
      return { group_id: f.group, contact_id: f.contact, removed };
    },
  },
  'group members': {
    flags: ['account', 'group'],
    required: ['group'],
    run: async (f) => {
      const accountId = await groupAccount(f);
      return { group_id: f.group, members: await groupMembers(accountId, f.group!) };
    },
  },
  'migrate threads': {
    flags: [],
    required: [],
    run: async () => migrateThreads((line) => console.error(line)),
  },
  'token create': {
    flags: ['account', 'contact'],
    required: ['account', 'contact'],
    run: async (f) => {
      await requireAccount(f.account!);
      if (!(await getContact(f.account!, f.contact!))) throw notFound(`contact ${f.contact} not found in account ${f.account}`);
      const { token, id } = await issueTokenWithId({ accountId: f.account!, contactId: f.contact! });
      return { token, token_id: id };
    },
  },
  'token list': {
    flags: ['account'],
    required: ['account'],
    run: async (f) => {
      await requireAccount(f.account!);
      return { tokens: await listTokens(f.account!) };
    },
  },
  'token revoke': {
    flags: ['token', 'id'],
    required: [],
    run: async (f) => {
      if ((f.token === undefined) === (f.id === undefined)) throw usageError('token revoke needs exactly one of --id and --token');
      if (f.id !== undefined) {
        if (!looksLikeId('tkn', f.id)) throw usageError('--id must be a token id as listed (tkn_...)');
        if (!(await revokeTokenById(f.id))) throw notFound(`token ${f.id} not found`);
        return { revoked: true, token_id: f.id };
      }
      if (!TOKEN_PATTERN.test(f.token!)) throw usageError('--token must be a token as issued (tok_...)');
      if (!(await revokeToken(f.token!))) throw notFound('token not found');
      return { revoked: true };
    },
  },
  'credits add': {
    flags: ['account', 'amount'],
    required: ['account', 'amount'],
    run: async (f) => {
      const amount = count(f, 'amount')!;
      const added = await addCredits(f.account!, amount);
      if (added === undefined) throw notFound(`account ${f.account} not found`);
      // Validation work held for lack of credits resumes now (and otherwise with the next sweeper run).
      if (!config().validationQueueUrl) return { credits: added };
      await resumeAwaiting(f.account!);
      return { credits: (await creditBalance(f.account!)) ?? added };
    },
  },
};

/** An endpoint id flag, checked before any read. */
function webhookId(f: Flags): string {
  if (!looksLikeId('whk', f.id!)) throw usageError('--id must be a webhook id as listed (whk_...)');
  return f.id!;
}

Object.assign(commands, {
  'webhook create': {
    flags: ['account', 'url', 'events'],
    required: ['account', 'url'],
    run: async (f) => {
      await requireAccount(f.account!);
      try {
        return await createWebhook(f.account!, f.url!, parseEventTypes(f.events));
      } catch (error) {
        throw error instanceof WebhookInputError ? usageError(error.message) : error;
      }
    },
  },
  'webhook list': {
    flags: ['account'],
    required: ['account'],
    run: async (f) => {
      await requireAccount(f.account!);
      return { webhooks: await listWebhooks(f.account!) };
    },
  },
  'webhook delete': {
    flags: ['id'],
    required: ['id'],
    run: async (f) => {
      if (!(await removeWebhook(webhookId(f)))) throw notFound(`webhook ${f.id} not found`);
      return { deleted: true, webhook_id: f.id };
    },
  },
  'webhook rotate-secret': {
    flags: ['id'],
    required: ['id'],
    run: async (f) => {
      const rotated = await rotateWebhookSecret(webhookId(f));
      if (!rotated) throw notFound(`webhook ${f.id} not found`);
      return rotated;
    },
  },
  'webhook deliveries': {
    flags: ['id'],
    required: ['id'],
    run: async (f) => {
      const found = await webhookDeliveries(webhookId(f));
      if (!found) throw notFound(`webhook ${f.id} not found`);
      return found;
    },
  },
} satisfies Record<string, Command>);

const GLOBAL_FLAGS = ['table', 'region', 'stack'];
const NUMERIC_FLAGS = ['credits', 'amount'];

function parse(argv: string[]) {
  const names = [...new Set([...GLOBAL_FLAGS, ...Object.values(commands).flatMap((c) => c.flags)])];
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { help: { type: 'boolean', short: 'h' }, ...Object.fromEntries(names.map((n) => [n, { type: 'string' as const }])) },
    });
  } catch (error) {
    throw usageError((error as Error).message);
  }
  const { help, ...flags } = parsed.values as Flags & { help?: boolean };
  const name = parsed.positionals.join(' ');
  if (help || name === 'help') return 'help' as const;
  if (name === '') throw usageError('no command given');
  const command = commands[name];
  if (!command) throw usageError(`unknown command "${name}"`);
  for (const [flag, value] of Object.entries(flags)) {
    if (!command.flags.includes(flag) && !GLOBAL_FLAGS.includes(flag)) throw usageError(`${name} does not take --${flag}`);
    if (value === undefined || value.trim() === '') throw usageError(`--${flag} must not be empty`);
  }
  for (const flag of command.required) if (flags[flag] === undefined) throw usageError(`${name} needs --${flag}`);
  for (const flag of NUMERIC_FLAGS) count(flags, flag);
  return { command, flags };
}

/** The live `npm start` stack, if its runtime file names a process that is still running. */
function runningStack(): RuntimeFile | undefined {
  if (!existsSync(RUNTIME_FILE)) return undefined;
  let runtime: RuntimeFile;
  try {
    runtime = JSON.parse(readFileSync(RUNTIME_FILE, 'utf8')) as RuntimeFile;
    if (!Number.isInteger(runtime.pid) || typeof runtime.env !== 'object') throw new Error('missing pid or env');
  } catch (error) {
    console.error(`ignoring unreadable ${RUNTIME_FILE}: ${(error as Error).message}`);
    return undefined;
  }
  try {
    process.kill(runtime.pid, 0);
  } catch (error) {
    // EPERM: alive but not ours to signal.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') {
      console.error(`ignoring stale ${RUNTIME_FILE}: process ${runtime.pid} is not running`);
      return undefined;
    }
  }
  return runtime;
}

function selectTarget(flags: Flags): void {
  if (flags.table !== undefined || flags.region !== undefined) {
    if (flags.table !== undefined) process.env.TABLE_NAME = flags.table;
    if (flags.region !== undefined) process.env.AWS_REGION = flags.region;
  } else {
    const stack = runningStack();
    if (stack) {
      console.error(`target: local stack (pid ${stack.pid}, table ${stack.env.TABLE_NAME})`);
      useBackends(stack.env);
      return;
    }
  }
  if (!process.env.TABLE_NAME) {
    throw new CliError(
      'no target: run `npm start` first (in this directory), or set TABLE_NAME and AWS_REGION (or pass --table and --region) to use a deployed table',
      1,
    );
  }
  if (!process.env.AWS_REGION && !process.env.AWS_DEFAULT_REGION) throw usageError('set AWS_REGION or pass --region');
  console.error(`target: table ${process.env.TABLE_NAME} in ${process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION}`);
  resetConfig();
  resetDb();
  usagePlans = new UsagePlans(flags.stack ?? process.env.STACK_NAME ?? 'serverless-messaging');
}

function finish(result: Record<string, unknown>, exitCode: number): void {
  process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(exitCode));
}

// stdout carries only the result object.
console.log = console.error;
console.info = console.error;

try {
  const parsed = parse(process.argv.slice(2));
  if (parsed === 'help') {
    // Asked for, the usage is the answer: on stdout, exit 0.
    process.stdout.write(`${USAGE}\n`, () => process.exit(0));
  } else {
    selectTarget(parsed.flags);
    finish(await parsed.command.run(parsed.flags), 0);
  }
} catch (error) {
  const exitCode = error instanceof CliError ? error.exitCode : 1;
  if (exitCode === 2) console.error(USAGE);
  finish({ error: { message: (error as Error).message || String(error) } }, exitCode);
}
