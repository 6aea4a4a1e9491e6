/**
 * A tiny DNS server for trying the email API locally without the internet:
 *   npm run dns:demo        (serves 127.0.0.1:5353 until Ctrl-C)
 *   DNS_SERVERS=127.0.0.1:5353 npm start
 * Its zones cover the cases the validator distinguishes; MX hosts resolve to
 * loopback, which local runs allow (ALLOW_PRIVATE_MX defaults to true there).
 */
import { startDnsServer } from './local/dns-server.ts';
import { demoZones } from './local/demo-zones.ts';
import { stopWithParent } from './local/stop-with-parent.ts';

const port = Number(process.env.DNS_DEMO_PORT ?? 5353);
const server = await startDnsServer(demoZones, { port }).catch((error: NodeJS.ErrnoException) => {
  // One line, as npm start says it, rather than a stack trace.
  if (error.code !== 'EADDRINUSE') throw error;
  console.error(`npm run dns:demo: port ${port} (DNS_DEMO_PORT) is already in use; choose another: DNS_DEMO_PORT=<port> npm run dns:demo`);
  process.exit(1);
});
console.log(`DNS_SERVERS=${server.address}`);
console.log(`Zones: ${Object.keys(demoZones).join(', ')}; any other name is NXDOMAIN.`);
// SIGTERM or SIGINT to npm alone reaches only its shell: this process stops when that is gone too.
stopWithParent(() => server.stop().then(() => process.exit(0)));
