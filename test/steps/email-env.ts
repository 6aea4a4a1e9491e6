import { randomUUID } from 'node:crypto';
import { SQSClient } from '@aws-sdk/client-sqs';
import { resetConfig } from '#shared/config';
import { clearValidatorCache, resetValidatorConfig } from '#shared/email/validator/index';
import { ensureQueues } from '../../scripts/local/resources.ts';
import { startWorkers } from '../../scripts/local/runtime.ts';
import { demoZones } from '../../scripts/local/demo-zones.ts';
import { startDnsServer, type DnsServer, type Zones } from '../../scripts/local/dns-server.ts';

/** Zones every email test can use (the same the local demo DNS server serves). */
export const standardZones: Zones = demoZones;

export interface EmailEnv {
  dns: DnsServer;
  stop: () => Promise<void>;
}

/**
 * Points the validator at a DNS server on loopback and gives this test file
 * its own queues and workers, so parallel files never process each other's
 * work with the wrong DNS server. Queue visibility is shortened to 2 s so
 * redeliveries happen within a test.
 */
export async function emailEnv(zones: Zones = standardZones, options: { workers?: boolean } = {}): Promise<EmailEnv | undefined> {
  // Against a deployed stack its own DNS, queues and workers are used: nothing to start here.
  if (process.env.EMAIL_BASE_URL) return undefined;
  const dns = await startDnsServer(zones);
  Object.assign(process.env, {
    DNS_SERVERS: dns.address,
    DNS_TIMEOUT_MS: '400',
    DNS_TRIES: '2',
    ALLOW_PRIVATE_MX: 'true',
    SMTP_PROBE: 'off',
  });
  resetValidatorConfig();
  clearValidatorCache();
  const sqs = new SQSClient({});
  Object.assign(process.env, await ensureQueues(sqs, `t-${randomUUID().slice(0, 8)}`, 2));
  sqs.destroy();
  resetConfig();
  const workers = options.workers === false ? undefined : startWorkers(process.env as Record<string, string>, { waitSeconds: 1 });
  return {
    dns,
    stop: async () => {
      await workers?.stop();
      await dns.stop();
    },
  };
}
