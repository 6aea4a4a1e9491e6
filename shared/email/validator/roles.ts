/**
 * Role ("generic") local parts: mailboxes that belong to a function, not a
 * person. Mail to them reaches a queue or a team, often nobody, so they are
 * flagged (`is_username_generic`) and score a little lower.
 *
 * Kept in the repository, curated by hand and grouped so a reviewer can see
 * why a name is here. Names are matched case-insensitively against the local
 * part before any `+tag`, also with `.`, `-` and `_` removed (so `no.reply`,
 * `no_reply` and `No-Reply` all match `noreply`).
 */
export const ROLE_CATEGORIES = {
  admin: [
    'admin', 'administrator', 'root', 'hostmaster', 'postmaster', 'webmaster', 'sysadmin',
    'system', 'mailer-daemon', 'daemon', 'nobody', 'www', 'ftp', 'usenet', 'domains', 'dns', 'ssl-admin',
  ],
  support: [
    'support', 'help', 'helpdesk', 'servicedesk', 'service', 'services', 'customerservice',
    'customer-service', 'customercare', 'care', 'feedback', 'questions', 'techsupport', 'it', 'itsupport',
  ],
  sales: [
    'sales', 'orders', 'order', 'shop', 'store', 'purchasing', 'procurement', 'quotes', 'bizdev',
    'business', 'partners', 'partnerships', 'reseller', 'wholesale',
  ],
  noreply: [
    'noreply', 'no-reply', 'donotreply', 'do-not-reply', 'bounce', 'bounces', 'mailer',
    'notifications', 'notification', 'alerts', 'alert', 'autoreply', 'automated',
  ],
  contact: [
    'info', 'information', 'contact', 'contactus', 'contact-us', 'hello', 'enquiries', 'enquiry',
    'inquiries', 'inquiry', 'office', 'mail', 'email', 'general', 'team', 'staff', 'all', 'everyone',
    'reception', 'frontdesk', 'welcome',
  ],
  finance: [
    'billing', 'accounts', 'accounting', 'invoices', 'invoice', 'finance', 'payments', 'payment',
    'payroll', 'receivables', 'payables', 'tax', 'treasury',
  ],
  jobs: [
    'hr', 'jobs', 'careers', 'career', 'recruiting', 'recruitment', 'recruiter', 'talent', 'hiring',
    'applications', 'humanresources', 'human-resources',
  ],
  marketing: [
    'marketing', 'press', 'media', 'pr', 'news', 'newsletter', 'newsletters', 'social', 'events',
    'advertising', 'ads', 'promotions', 'communications', 'editor', 'editorial', 'subscribe',
    'unsubscribe', 'list', 'lists', 'list-request', 'majordomo', 'listserv',
  ],
  security: [
    'security', 'abuse', 'spam', 'phishing', 'privacy', 'legal', 'compliance', 'gdpr', 'dpo', 'cert',
    'csirt', 'incident', 'fraud', 'trustandsafety',
  ],
  operations: [
    'ops', 'operations', 'devops', 'noc', 'status', 'engineering', 'developers', 'dev', 'investors',
    'ir', 'board', 'management',
  ],
} as const satisfies Record<string, readonly string[]>;

export type RoleCategory = keyof typeof ROLE_CATEGORIES;

const squash = (name: string) => name.toLowerCase().replace(/[._-]/g, '');

/** Squashed role name → its category, built once per process. */
const ROLE_INDEX: ReadonlyMap<string, RoleCategory> = new Map(
  (Object.entries(ROLE_CATEGORIES) as [RoleCategory, readonly string[]][]).flatMap(([category, names]) =>
    names.map((name) => [squash(name), category] as const),
  ),
);

/** The role category of a local part (its `+tag` is ignored), or undefined for a personal-looking name. */
export function roleCategory(localPart: string): RoleCategory | undefined {
  const base = localPart.split('+')[0] ?? '';
  return ROLE_INDEX.get(squash(base));
}

export function isRoleAccount(localPart: string): boolean {
  return roleCategory(localPart) !== undefined;
}
