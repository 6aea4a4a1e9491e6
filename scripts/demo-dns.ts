/**
 * A tiny DNS server for trying the email API locally without the internet:
 *   npm run dns:demo        (serves 127.0.0.1:5353 until Ctrl-C)
 *   DNS_SERVERS=127.0.0.1:5353 npm start
 * Its zones cover the cases the validator distinguishes; MX hosts resolve to
 * loopback, which local runs allow (ALLOW_PRIVATE_MX defaults to true there).
 */
import { startDnsServer } from './local/dns-server.ts';

const port = Number(process.env.DNS_DEMO_PORT ?? 5353);
const server = await startDnsServer(
  {
    'example.com': { mx: [{ priority: 10, exchange: 'mx1.example.com' }, { priority: 20, exchange: 'mx2.example.com' }] },
    'mx1.example.com': { a: ['127.0.0.1'] },
    'mx2.example.com': { a: ['127.0.0.2'] },
    'gmail.com': { mx: [{ priority: 5, exchange: 'gmail-smtp-in.l.google.com' }] },
    'gmail-smtp-in.l.google.com': { a: ['127.0.0.3'] },
    'agency.gov': { mx: [{ priority: 10, exchange: 'mail.agency.gov' }] },
    'mail.agency.gov': { a: ['127.0.0.4'] },
    'aonly.test': { a: ['127.0.0.5'] },
    'nullmx.test': { nullMx: true },
    'broken.test': { servfail: true },
  },
  { port },
);
console.log(`DNS_SERVERS=${server.address}`);
console.log('Zones: example.com (2 MX), gmail.com, agency.gov, aonly.test (A only), nullmx.test (null MX), broken.test (SERVFAIL); anything else is NXDOMAIN.');
const stop = () => void server.stop().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
