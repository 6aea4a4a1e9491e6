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
import { addCredits, creditBalance, createAccount, getAccount, setAccountLimits } from '#shared/data/accounts';
import { getGroup, groupAccountOf } from '#shared/data/groups';
import { groupMembers, MAX_GROUP_MEMBERS } from '#shared/data/group-members';
import { createSecretKey, listSecretKeys, revokeSecretKey } from '#shared/data/secret-keys';
import { findToken, MAX_TOKEN_SECONDS, revokeToken, revokeTokenById, TOKEN_PATTERN } from '#shared/data/tokens';
import { resetDb } from '#shared/db/client';
import { resumeAwaiting } from '#shared/email/outbox';
import { DomainError } from '#shared/errors';
import { describeAccount } from '#shared/platform/account';
import { createContact, deleteContact } from '#shared/platform/contacts';
import { ApiError } from '#shared/http/errors';
import { createContactBody } from '#shared/http/platform-schemas';
import { validate, type Schema } from '#shared/http/validation';
import { addGroupMember, createGroup, removeGroupMember } from '#shared/platform/groups';
import { issueContactToken, listTokens } from '#shared/platform/tokens';
import { MAX_RATE_LIMIT, type RateLimits } from '#shared/rate-limits';
import { looksLikeId } from '#shared/util/ids';
import { createWebhook } from '#shared/webhooks/subscribe';
import {
  describeWebhook,
  listWebhooks,
  parseEventTypes,
  removeWebhook,
  rotateWebhookSecret,
  webhookDeliveries,
} from '#shared/webhooks/manage';
import { RUNTIME_FILE, type RuntimeFile } from './local/runtime-file.ts';
import { useBackends } from './local/runtime.ts';
import { migrateCopies } from './migrations/copies.ts';
import { migrateJobs } from './migrations/jobs.ts';
import { migratePlatform } from './migrations/platform.ts';
import { migrateThreads } from './migrations/threads.ts';
import { UsagePlans } from './usage-plans.ts';

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

/**
 * One command: its flags as the usage shows them (`--name N`, `[--credits C]`;
 * a flag in brackets is optional), one line on what it does, and `run`, a
 * call to the same domain functions the platform endpoints use.
 */
interface Command {
  usage: string;
  summary: string;
  run: (flags: Flags) => Promise<Record<string, unknown>>;
}

/** The flags a usage names, and which of them are required (outside brackets). */
function flagsOf(command: Command): { flags: string[]; required: string[] } {
  const flags: string[] = [];
  const required: string[] = [];
  for (const part of command.usage.matchAll(/(\[?)--([a-z-]+)/g)) {
    flags.push(part[2]!);
    // A flag inside brackets (`[--x X]`, or one of `(--a A | --b B)`) is not required by itself.
    const before = command.usage.slice(0, part.index);
    const open = (before.match(/[[(]/g) ?? []).length - (before.match(/[\])]/g) ?? []).length;
    if (part[1] === '' && open === 0) required.push(part[2]!);
  }
  return { flags, required };
}

/** A non-negative integer flag value, or a usage error. */
function count(flags: Flags, name: string): number | undefined {
  const raw = flags[name];
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value)) throw usageError(`--${name} must be a non-negative integer, got "${raw}"`);
  return value;
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

async function requireAccount(accountId: string) {
  const account = await getAccount(accountId);
  if (!account) throw notFound(`account ${accountId} not found`);
  return { accountId };
}

/** The account of the group named by --group: --account when given, else the group's own index entry. */
async function groupAccount(f: Flags) {
  const accountId = f.account ?? (await groupAccountOf(f.group!));
  if (!accountId || !(await getGroup(accountId, f.group!)))
    throw notFound(`group ${f.group} not found${f.account ? ` in account ${f.account}` : ''}`);
  return { accountId };
}

/** An id flag of the given kind, checked before any read. */
function idFlag(f: Flags, prefix: 'whk' | 'key', listed: string): string {
  if (!looksLikeId(prefix, f.id!)) throw usageError(`--id must be ${listed} id as listed: ${prefix}_ and 26 letters and digits`);
  return f.id!;
}

const FLAG_OF: Record<string, string> = { phone_number: 'phone', avatar_url: 'avatar-url' };

/** Input checked by an endpoint's schema; a refusal is a usage error naming the flag. */
function validated<T>(schema: Schema<T>, input: Record<string, unknown>): T {
  try {
    return validate(schema, input, 'body');
  } catch (error) {
    if (!(error instanceof ApiError) || error.param === undefined) throw error;
    throw usageError(`--${FLAG_OF[error.param] ?? error.param}: ${error.message}`);
  }
}

/** Set when the target is a deployed stack: its usage plans carry the limits there. */
let usagePlans: UsagePlans | undefined;

const commands: Record<string, Command> = {
  'account create': {
    usage: '--name N [--credits C]',
    summary: 'on AWS also gives the account its API key in the default usage plan',
    run: async (f) => {
      const account = await createAccount({ name: f.name!, credits: count(f, 'credits') });
      const plan = usagePlans ? await usagePlans.enable(account.account_id) : {};
      return { account_id: account.account_id, ...plan };
    },
  },
  'account show': {
    usage: '--account A',
    summary: 'what GET /v1/account answers: credits left and the rate limit',
    run: async (f) => describeAccount(await requireAccount(f.account!)),
  },
  'account limits': {
    usage: '--account A (--rate R --burst B | --default true)',
    summary: "the account's own rate limit across both APIs (requests/s, burst), or back to the deployment's default",
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
  'key create': {
    usage: '--account A',
    summary: "a secret key for the account's backend (the platform endpoints); shown only here",
    run: async (f) => createSecretKey((await requireAccount(f.account!)).accountId),
  },
  'key list': {
    usage: '--account A',
    summary: 'ids and creation and revocation times; never a key',
    run: async (f) => ({ keys: await listSecretKeys((await requireAccount(f.account!)).accountId) }),
  },
  'key revoke': {
    usage: '--id ID',
    summary: 'refused from the next request on (on AWS within AUTH_CACHE_SECONDS)',
    run: async (f) => {
      const revoked = await revokeSecretKey(idFlag(f, 'key', 'a key'));
      if (!revoked) throw notFound(`key ${f.id} not found`);
      return { revoked: true, key_id: revoked.key_id };
    },
  },
  'contact create': {
    usage: '--account A --username U [--phone P] [--avatar-url URL]',
    summary: 'usernames are unique in the account, ignoring case',
    run: async (f) => {
      // The endpoint's own checks (username length, E.164, an https avatar), its messages naming the flag.
      const input = validated(createContactBody, {
        username: f.username,
        ...(f.phone === undefined ? {} : { phone_number: f.phone }),
        ...(f['avatar-url'] === undefined ? {} : { avatar_url: f['avatar-url'] }),
      });
      const contact = await createContact(await requireAccount(f.account!), input);
      return { contact_id: contact.id };
    },
  },
  'contact delete': {
    usage: '--account A --contact C',
    summary: 'revokes its tokens, leaves its groups, deletes its own conversations',
    run: async (f) => {
      await deleteContact(await requireAccount(f.account!), f.contact!, Date.now() + 30_000);
      return { deleted: true, contact_id: f.contact };
    },
  },
  'group create': {
    usage: '--account A --name N',
    summary: 'an empty group',
    run: async (f) => ({ group_id: (await createGroup(await requireAccount(f.account!), { name: f.name! })).id }),
  },
  'group add-member': {
    usage: '--group G --contact C [--account A]',
    summary: `up to ${MAX_GROUP_MEMBERS} members a group`,
    run: async (f) => {
      const account = await groupAccount(f);
      const before = (await getGroup(account.accountId, f.group!, true))!.member_count;
      const after = await addGroupMember(account, f.group!, f.contact!);
      return { group_id: f.group, contact_id: f.contact, added: after.member_count > before };
    },
  },
  'group remove-member': {
    usage: '--group G --contact C [--account A]',
    summary: 'the member keeps what it received, and receives nothing new',
    run: async (f) => {
      const account = await groupAccount(f);
      const removed = await removeGroupMember(account, f.group!, f.contact!).then(
        () => true,
        (error: unknown) => (error instanceof DomainError && error.kind === 'not_found' ? false : Promise.reject(error)),
      );
      return { group_id: f.group, contact_id: f.contact, removed };
    },
  },
  'group members': {
    usage: '--group G [--account A]',
    summary: "the members' contact ids",
    run: async (f) => ({ group_id: f.group, members: await groupMembers((await groupAccount(f)).accountId, f.group!) }),
  },
  'token create': {
    usage: '--account A --contact C [--expires-in S]',
    summary: `a user token (shown only here) and its id; --expires-in 60 to ${MAX_TOKEN_SECONDS} seconds`,
    run: async (f) => {
      const expiresIn = count(f, 'expires-in');
      if (expiresIn !== undefined && (expiresIn < 60 || expiresIn > MAX_TOKEN_SECONDS))
        throw usageError(`--expires-in must be 60 to ${MAX_TOKEN_SECONDS} seconds`);
      const issued = await issueContactToken(await requireAccount(f.account!), f.contact!, expiresIn);
      return { token: 'token' in issued ? issued.token : null, token_id: issued.id, expires_at: issued.expires_at };
    },
  },
  'token list': {
    usage: '--account A --contact C',
    summary: "a contact's tokens, newest first: ids and times; never a token",
    run: async (f) => ({ tokens: (await listTokens(await requireAccount(f.account!), f.contact!, { limit: 100 })).items }),
  },
  'token revoke': {
    usage: '(--id ID | --token T)',
    summary: 'refused from the next request on (on AWS within AUTH_CACHE_SECONDS)',
    run: async (f) => {
      if ((f.token === undefined) === (f.id === undefined)) throw usageError('token revoke needs exactly one of --id and --token');
      if (f.id !== undefined) {
        if (!looksLikeId('tok', f.id) && !looksLikeId('tkn', f.id))
          throw usageError('--id must be a token id as listed: tok_ and 26 letters and digits');
        if (!(await findToken(f.id)) || !(await revokeTokenById(f.id))) throw notFound(`token ${f.id} not found`);
        return { revoked: true, token_id: f.id };
      }
      if (!TOKEN_PATTERN.test(f.token!)) throw usageError('--token must be a token as issued (tok_...)');
      if (!(await revokeToken(f.token!))) throw notFound('token not found');
      return { revoked: true };
    },
  },
  'credits add': {
    usage: '--account A --amount N',
    summary: 'validation work held for lack of credits resumes',
    run: async (f) => {
      const added = await addCredits(f.account!, count(f, 'amount')!);
      if (added === undefined) throw notFound(`account ${f.account} not found`);
      // Validation work held for lack of credits resumes now (and otherwise with the next sweeper run).
      if (!config().validationQueueUrl) return { credits: added };
      await resumeAwaiting(f.account!);
      return { credits: (await creditBalance(f.account!)) ?? added };
    },
  },
  'webhook create': {
    usage: '--account A --url URL [--events type,type]',
    summary: 'prints the id and the secret (shown only here)',
    run: async (f) => {
      const account = await requireAccount(f.account!);
      const { webhook, secret } = await createWebhook(account.accountId, f.url!, parseEventTypes(f.events?.split(','), 'events'), 'url');
      return { webhook_id: webhook.id, secret };
    },
  },
  'webhook list': {
    usage: '--account A',
    summary: "the account's endpoints and their state; never a secret",
    run: async (f) => ({ webhooks: (await listWebhooks((await requireAccount(f.account!)).accountId)).map(describeWebhook) }),
  },
  'webhook delete': {
    usage: '--id ID',
    summary: 'no more events are sent to it',
    run: async (f) => {
      await removeWebhook(idFlag(f, 'whk', 'a webhook'));
      return { deleted: true, webhook_id: f.id };
    },
  },
  'webhook rotate-secret': {
    usage: '--id ID',
    summary: 'a new secret; the old one also signs for 24 h',
    run: async (f) => {
      const { webhook, secret, previous_secret_signs_until } = await rotateWebhookSecret(idFlag(f, 'whk', 'a webhook'));
      return { webhook_id: webhook.id, secret, previous_secret_signs_until };
    },
  },
  'webhook deliveries': {
    usage: '--id ID',
    summary: 'recent attempts, newest first',
    run: async (f) => {
      const { webhook, deliveries } = await webhookDeliveries(idFlag(f, 'whk', 'a webhook'));
      return { ...describeWebhook(webhook), deliveries };
    },
  },
  'migrate threads': {
    usage: '',
    summary: '0.2 → 0.3: moves each 0.2 message into its thread (idempotent)',
    run: async () => migrateThreads((line) => console.error(line)),
  },
  'migrate platform': {
    usage: '',
    summary: '0.3 → 0.4: the index entries the platform endpoints read (idempotent)',
    run: async () => migratePlatform((line) => console.error(line)),
  },
  'migrate jobs': {
    usage: '',
    summary: '0.3 → 0.4: fan-out and purge records as durable jobs (idempotent)',
    run: async () => migrateJobs((line) => console.error(line)),
  },
  'migrate copies': {
    usage: '',
    summary: "0.4 → 0.5: one-to-one messages copied into their participants' entries (idempotent)",
    run: async () => migrateCopies((line) => console.error(line)),
  },
};

const USAGE = [
  "usage: npm run -s admin -- <command> [flags]   (-s keeps npm's own banner off stdout)",
  '',
  'commands:',
  ...Object.entries(commands).flatMap(([name, c]) => [`  ${name} ${c.usage}`.trimEnd(), `      ${c.summary}`]),
  '  help',
  '      this text (also --help)',
  '',
  'target (default: the stack `npm start` is running, via ' + RUNTIME_FILE + '):',
  '  --table NAME --region R   a deployed table (or set TABLE_NAME / AWS_REGION),',
  '                            using the normal AWS credential chain',
  "  --stack NAME              the deployed stack's name, for its usage plans",
  '                            (default: STACK_NAME, else serverless-messaging)',
  '',
  'Prints one JSON object on stdout. Exit codes: 0 ok, 1 not found/failure, 2 usage error.',
].join('\n');

const GLOBAL_FLAGS = ['table', 'region', 'stack'];
const NUMERIC_FLAGS = ['credits', 'amount', 'expires-in'];

/** The command the line named, once known: a usage error then shows that command's usage, not every command's. */
let named: string | undefined;

function parse(argv: string[]) {
  const names = [...new Set([...GLOBAL_FLAGS, ...Object.values(commands).flatMap((c) => flagsOf(c).flags)])];
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
  named = name;
  const { flags: takes, required } = flagsOf(command);
  for (const [flag, value] of Object.entries(flags)) {
    if (!takes.includes(flag) && !GLOBAL_FLAGS.includes(flag)) throw usageError(`${name} does not take --${flag}`);
    if (value === undefined || value.trim() === '') throw usageError(`--${flag} must not be empty`);
  }
  for (const flag of required) if (flags[flag] === undefined) throw usageError(`${name} needs --${flag}`);
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
      'no target: run `npm start` first (in this directory, with the same LOCAL_DIR if it has one), or set TABLE_NAME and AWS_REGION (or pass --table and --region) to use a deployed table',
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
  // The domain's refusals: a bad value is a usage error, anything else (not found, a conflict) a failure.
  const exitCode = error instanceof CliError ? error.exitCode : error instanceof DomainError && error.kind === 'invalid' ? 2 : 1;
  if (exitCode === 2) {
    const command = named === undefined ? undefined : commands[named];
    console.error(command ? `usage: npm run -s admin -- ${named} ${command.usage}`.trimEnd() + '   (help: every command)' : USAGE);
  }
  finish({ error: { message: (error as Error).message || String(error) } }, exitCode);
}
