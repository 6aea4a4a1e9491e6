import net from 'node:net';

/**
 * Validator settings, read from the environment once per process. A bad value
 * (SMTP_PROBE=maybe, DNS_TRIES=0, ...) throws at the first validation with a
 * message naming the variable, instead of silently falling back to a default
 * and validating every address of a deployment wrongly.
 */
export class ValidatorConfigError extends Error {
  override name = 'ValidatorConfigError';
}

export const SMTP_PROBE_MODES = ['off', 'tcp', 'rcpt'] as const;
export type SmtpProbeMode = (typeof SMTP_PROBE_MODES)[number];

export interface ValidatorConfig {
  /** Resolver addresses (`ip` or `ip:port`, `[v6]:port`); undefined = the system resolvers. */
  dnsServers: string[] | undefined;
  /** Per-query timeout. */
  dnsTimeoutMs: number;
  /** Attempts per query when the failure is transient (SERVFAIL, timeout, refused, connection errors). */
  dnsTries: number;
  /**
   * `off`: DNS-level connectability only; `tcp`: also wait for the SMTP `220`
   * greeting; `rcpt`: also ask the mail host about the mailbox (RCPT TO, never DATA).
   */
  smtpProbe: SmtpProbeMode;
  smtpPort: number;
  /** Budget for one MX host's greeting probe (connect + greeting); under `rcpt`, also for each reply of the dialog. */
  smtpTimeoutMs: number;
  /** SOCKS5 proxy the probe goes through (SMTP_PROXY=socks5://host:port); used when smtpProbe is `tcp` or `rcpt`. */
  smtpProxy: { host: string; port: number } | undefined;
  /** `rcpt`: the name said in EHLO (SMTP_HELO_NAME). */
  smtpHeloName: string;
  /** `rcpt`: the reverse path of MAIL FROM (SMTP_MAIL_FROM); empty means the null sender `<>`. */
  smtpMailFrom: string;
  /** `rcpt`: SMTP connections this process holds open to one MX host at once. */
  smtpMaxConnectionsPerHost: number;
  /** `rcpt`: a temporary answer (greylisting) is asked again after this long, doubling each time... */
  smtpRetryFirstSeconds: number;
  /** ...until the address has waited this long; then it is given up as `unknown`. */
  smtpRetryGiveUpSeconds: number;
  /** Let MX hosts resolve to private/loopback/link-local addresses (local runs and tests only). */
  allowPrivateMx: boolean;
  /** How long DNS answers and probe results are reused; 0 keeps only in-flight sharing. */
  cacheTtlMs: number;
}

type Env = Record<string, string | undefined>;

let cached: ValidatorConfig | undefined;

export function validatorConfig(): ValidatorConfig {
  cached ??= readValidatorConfig(process.env);
  return cached;
}

/** Tests change the environment between cases; production never calls this. */
export function forgetValidatorConfig(): void {
  cached = undefined;
}

/** The settings a deployment can pass to the functions that validate (the stack forwards them). */
export const VALIDATOR_ENV_VARS = [
  'DNS_SERVERS',
  'DNS_TIMEOUT_MS',
  'DNS_TRIES',
  'SMTP_PROBE',
  'SMTP_PORT',
  'SMTP_TIMEOUT_MS',
  'SMTP_PROXY',
  'SMTP_HELO_NAME',
  'SMTP_MAIL_FROM',
  'SMTP_MAX_CONNECTIONS_PER_HOST',
  'SMTP_RETRY_FIRST_SECONDS',
  'SMTP_RETRY_GIVE_UP_SECONDS',
  'ALLOW_PRIVATE_MX',
  'VALIDATION_CACHE_TTL_SECONDS',
] as const;

/** The EHLO name when SMTP_HELO_NAME is unset; a deployment probing with `rcpt` should set its own (matching its egress PTR). */
export const DEFAULT_HELO_NAME = 'localhost';

export function readValidatorConfig(env: Env): ValidatorConfig {
  return {
    dnsServers: dnsServers(env.DNS_SERVERS),
    dnsTimeoutMs: integer(env, 'DNS_TIMEOUT_MS', 2000, 1, 60_000),
    dnsTries: integer(env, 'DNS_TRIES', 3, 1, 10),
    smtpProbe: oneOf(env, 'SMTP_PROBE', SMTP_PROBE_MODES, 'off'),
    smtpPort: integer(env, 'SMTP_PORT', 25, 1, 65_535),
    smtpTimeoutMs: integer(env, 'SMTP_TIMEOUT_MS', 3000, 1, 60_000),
    smtpProxy: socksProxy(env.SMTP_PROXY),
    smtpHeloName: heloName(env.SMTP_HELO_NAME),
    smtpMailFrom: mailFrom(env.SMTP_MAIL_FROM),
    smtpMaxConnectionsPerHost: integer(env, 'SMTP_MAX_CONNECTIONS_PER_HOST', 2, 1, 20),
    smtpRetryFirstSeconds: integer(env, 'SMTP_RETRY_FIRST_SECONDS', 60, 1, 900),
    smtpRetryGiveUpSeconds: integer(env, 'SMTP_RETRY_GIVE_UP_SECONDS', 900, 0, 86_400),
    allowPrivateMx: boolean(env, 'ALLOW_PRIVATE_MX', false),
    cacheTtlMs: integer(env, 'VALIDATION_CACHE_TTL_SECONDS', 300, 0, 86_400) * 1000,
  };
}

function present(value: string | undefined): value is string {
  return value !== undefined && value.trim() !== '';
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (!present(raw)) return fallback;
  const value = Number(raw.trim());
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new ValidatorConfigError(`${name} must be an integer from ${min} to ${max}, got '${raw}'`);
  }
  return value;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (!present(raw)) return fallback;
  const value = raw.trim().toLowerCase();
  if (!(allowed as readonly string[]).includes(value)) {
    throw new ValidatorConfigError(`${name} must be one of ${allowed.map((a) => `'${a}'`).join(', ')}, got '${raw}'`);
  }
  return value as T;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (!present(raw)) return fallback;
  const value = raw.trim().toLowerCase();
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw new ValidatorConfigError(`${name} must be 'true' or 'false', got '${raw}'`);
}

/** Same forms `Resolver#setServers` takes, checked here so a typo is named clearly. */
function dnsServers(raw: string | undefined): string[] | undefined {
  if (!present(raw)) return undefined;
  const servers = raw.split(',').map((s) => s.trim());
  for (const server of servers) {
    if (!parseHostPort(server, { requireIp: true, requirePort: false })) {
      throw new ValidatorConfigError(
        `DNS_SERVERS must be a comma-separated list of 'ip' or 'ip:port' ('[ipv6]:port'), got '${server}' in '${raw}'`,
      );
    }
  }
  return servers;
}

/** A host name (letters, digits, dots, hyphens) or an address literal `[192.0.2.1]`: what EHLO may carry. */
function heloName(raw: string | undefined): string {
  if (!present(raw)) return DEFAULT_HELO_NAME;
  const value = raw.trim();
  const literal = /^\[([^\]]+)\]$/.exec(value);
  const ok = literal
    ? net.isIP(literal[1]!) !== 0
    : /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(value);
  if (!ok) throw new ValidatorConfigError(`SMTP_HELO_NAME must be a host name or an address literal like '[192.0.2.1]', got '${raw}'`);
  return value;
}

/** A plain `local@domain` with no spaces or angle brackets (it goes inside `MAIL FROM:<...>`), or empty for `<>`. */
function mailFrom(raw: string | undefined): string {
  if (!present(raw)) return '';
  const value = raw.trim();
  if (!/^[^\s<>@]{1,64}@[A-Za-z0-9.-]{1,253}$/.test(value)) {
    throw new ValidatorConfigError(`SMTP_MAIL_FROM must be an address like 'verify@example.com' (or empty for '<>'), got '${raw}'`);
  }
  return value;
}

function socksProxy(raw: string | undefined): ValidatorConfig['smtpProxy'] {
  if (!present(raw)) return undefined;
  const match = /^socks5:\/\/(.+)$/i.exec(raw.trim());
  const hostPort = match?.[1] && parseHostPort(match[1], { requireIp: false, requirePort: true });
  if (!hostPort || hostPort.port === undefined) {
    throw new ValidatorConfigError(`SMTP_PROXY must look like 'socks5://host:port', got '${raw}'`);
  }
  return { host: hostPort.host, port: hostPort.port };
}

export function parseHostPort(
  value: string,
  { requireIp, requirePort }: { requireIp: boolean; requirePort: boolean },
): { host: string; port: number | undefined } | undefined {
  let host: string;
  let portText: string | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(value);
  if (bracketed) {
    host = bracketed[1]!;
    portText = bracketed[2];
    if (net.isIPv6(host) === false) return undefined;
  } else if (net.isIPv6(value)) {
    host = value; // a bare IPv6 address has no port
  } else {
    const parts = value.split(':');
    if (parts.length > 2) return undefined;
    host = parts[0]!;
    portText = parts[1];
    if (parts.length === 2 && portText === '') return undefined;
  }
  if (requireIp && net.isIP(host) === 0) return undefined;
  if (!requireIp && !/^[A-Za-z0-9.-]+$/.test(host) && net.isIP(host) === 0) return undefined;
  if (portText === undefined) return requirePort ? undefined : { host, port: undefined };
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port < 1 || port > 65_535) return undefined;
  return { host, port };
}
