import type { Zones } from './dns-server.ts';

/**
 * DNS zones covering the cases the validator distinguishes, served by
 * `npm run dns:demo` and used by the tests. MX hosts resolve to loopback,
 * which local runs and tests allow (ALLOW_PRIVATE_MX).
 */
export const demoZones: Zones = {
  'example.com': {
    mx: [
      { priority: 10, exchange: 'mx1.example.com' },
      { priority: 20, exchange: 'mx2.example.com' },
    ],
  },
  'mx1.example.com': { a: ['127.0.0.1'] },
  'mx2.example.com': { a: ['127.0.0.2'] },
  'gmail.com': { mx: [{ priority: 5, exchange: 'gmail-smtp-in.l.google.com' }] },
  'gmail-smtp-in.l.google.com': { a: ['127.0.0.3'] },
  'agency.gov': { mx: [{ priority: 10, exchange: 'mail.agency.gov' }] },
  'mail.agency.gov': { a: ['127.0.0.4'] },
  'aonly.test': { a: ['127.0.0.5'] },
  'nullmx.test': { nullMx: true },
  'nowhere.test': { nxdomain: true },
  'broken.test': { servfail: true },
};
