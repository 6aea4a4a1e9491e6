import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { currentProber, resetValidatorConfig } from '#shared/email/validator/index';
import net from 'node:net';
import { MAX_REPLY_BYTES, MAX_REPLY_LINES, MAX_SESSION_BYTES, SmtpDialog, SmtpLimitError } from '#shared/email/validator/smtp-dialog';
import { connectSmtp } from '#shared/email/validator/smtp-probe';
import { aTenant, type Tenant } from '../steps/given.ts';
import { emailEnv, type EmailEnv } from '../steps/email-env.ts';
import { startHostileSmtpServer, type FloodStep, type HostileSmtpServer } from '../steps/hostile-smtp.ts';
import { scopedEnv } from '../steps/scoped-env.ts';
import { apiClient, type ApiClient } from '../steps/when.ts';

/**
 * A mail host that floods one step of the SMTP dialog with endless
 * 15,000-character continuation lines, under SMTP_PROBE=rcpt: anyone can
 * point their domain's MX at one and submit an address of it. The create
 * must answer within its budget, the process must go on serving other work
 * meanwhile, and the validator must read no more than its cap before it
 * hangs up.
 */
const DOMAIN = 'hostile.test';

/** What one socket read can hand over beyond a cap before the dialog sees it (libuv reads up to 64 KiB at once). */
const ONE_READ = 64 * 1024;
/** The create's inline budget (functions/emails/create.ts) plus generous room for a busy machine. */
const CREATE_BOUND_MS = 2_500 + 2_000;
/** "Within a few ms of their usual time", generously: the worst timer delay of the process while the host floods. */
const LOOP_DELAY_BOUND_MS = 50;

/**
 * A 1 ms interval, as any other request's callbacks would run: a stretch
 * without a tick is a time the process served nothing. Only stretches that
 * overlap the flood are counted, so a busy machine's pauses elsewhere in the
 * create do not fail the test.
 */
function watchTimers() {
  const gaps: [from: number, to: number][] = [];
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    gaps.push([last, now]);
    last = now;
  }, 1);
  return {
    /** The longest stretch without a tick that overlaps [from, to], the stretch still open at `to` included. */
    longestGapDuring(from: number, to: number): number {
      const open: [number, number] = [last, performance.now()];
      return Math.max(0, ...[...gaps, open].filter(([a, b]) => b >= from && a <= to).map(([a, b]) => b - a));
    },
    stop: () => clearInterval(timer),
  };
}

describe('a hostile mail host (SMTP_PROBE=rcpt)', () => {
  let api: ApiClient;
  let env: EmailEnv | undefined;
  let t: Tenant;
  let smtp: HostileSmtpServer | undefined;
  const scoped = scopedEnv(resetValidatorConfig);

  beforeAll(async () => {
    env = await emailEnv({
      [DOMAIN]: { mx: [{ priority: 10, exchange: `mx.${DOMAIN}` }] },
      [`mx.${DOMAIN}`]: { a: ['127.0.0.1'] },
    });
    api = await apiClient('email', 'handler');
    t = await aTenant();
    // A first create loads what every validation needs (lists, tables), so that is not counted against the flood.
    await api.call('POST', '/api/v1/emails', { token: t.token, json: { emails: ['warm@example.com'] } });
  });
  afterEach(async () => {
    await smtp?.stop();
    scoped.restore();
  });
  afterAll(async () => {
    await api.close();
    await env?.stop();
  });

  it.each<[FloodStep, string, number]>([
    ['greeting', 'for as long as it is read', Number.POSITIVE_INFINITY],
    ['ehlo', 'for as long as it is read', Number.POSITIVE_INFINITY],
    ['rcpt', 'for as long as it is read', Number.POSITIVE_INFINITY],
    // Ended: what the reply describer once spent seconds on (300 KB without a space).
    ['rcpt', 'with 20 lines, then ends the reply', 20],
  ])(
    'given a host flooding the %s answer %s: the create answers in time with unknown, other work is not held up, the client reads at most the cap',
    async (step, _how, lines) => {
      // Given a mail host that floods this step
      smtp = await startHostileSmtpServer(step, lines);
      scoped.set({ SMTP_PROBE: 'rcpt', SMTP_PORT: String(smtp.port), SMTP_TIMEOUT_MS: '2000', SMTP_MAX_CONNECTIONS_PER_HOST: '1' });
      // When an address of its domain is created, with a 1 ms timer standing for the process's other work
      const timers = watchTimers();
      const startedAt = Date.now();
      const created = api.call('POST', '/api/v1/emails', { token: t.token, json: { emails: [`jane@${DOMAIN}`] } });
      await smtp.flooding;
      const floodFrom = performance.now();
      const hungUp = smtp.allClosed().then(() => performance.now());
      const res = await created;
      const elapsed = Date.now() - startedAt;
      // Then it answers within its budget, and the flooded step makes the address unknown, not pending or retried
      expect(res.status, res.text).toBe(201);
      expect(elapsed).toBeLessThan(CREATE_BOUND_MS);
      expect(res.body.emails[0]).toMatchObject({ status: 'completed', deliverability: 'unknown', is_catch_all: null });
      // And the client hung up on the host: every connection is closed, and it read no more than its cap
      const floodTo = await hungUp;
      const read = currentProber()!.bytesRead;
      expect(read).toBeGreaterThan(0);
      expect(read).toBeLessThanOrEqual(MAX_REPLY_BYTES + ONE_READ);
      // And while the host flooded, the timer kept running: no stall of the process
      expect(timers.longestGapDuring(floodFrom, floodTo)).toBeLessThan(LOOP_DELAY_BOUND_MS);
      timers.stop();
    },
  );
});

/** A loopback server that greets, then answers every command with `reply`. */
async function answering(reply: string): Promise<{ port: number; stop: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.write('220 ok\r\n');
    socket.on('data', () => socket.write(reply));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as net.AddressInfo).port,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('the SMTP dialog caps', () => {
  const open = async (port: number) => (await SmtpDialog.open(connectSmtp, { address: '127.0.0.1', port, proxy: undefined }, 2_000)).dialog;

  it('given a reply of more lines than the cap, each short: the dialog hangs up with a limit error', async () => {
    const server = await answering(`${'250-x\r\n'.repeat(MAX_REPLY_LINES)}250 x\r\n`);
    try {
      const dialog = await open(server.port);
      await expect(dialog.command('EHLO verifier.test')).rejects.toThrow(SmtpLimitError);
      await expect(dialog.command('NOOP')).rejects.toThrow(/lines: dropped the connection/);
    } finally {
      await server.stop();
    }
  });

  it('given complete replies each under the reply cap: the session stops once they pass the session cap', async () => {
    const big = `250-${'b'.repeat(10_000)}\r\n250 ok\r\n`;
    const server = await answering(big);
    try {
      const dialog = await open(server.port);
      let answered = 0;
      const error = await (async () => {
        for (;;) {
          await dialog.command('NOOP');
          answered++;
        }
      })().catch((e: Error) => e);
      expect(error).toBeInstanceOf(SmtpLimitError);
      expect(error.message).toMatch(/in one session/);
      expect(answered).toBe(Math.floor(MAX_SESSION_BYTES / big.length));
    } finally {
      await server.stop();
    }
  });
});
