import { beforeAll, describe, expect, it } from 'vitest';
import { computeScore, didYouMean, editDistance, loadValidator, POPULAR_DOMAINS, scoreSignals } from '#shared/email/validator/index';
import { ACCEPT_ALL_PROVIDERS, acceptAllProvider, mailboxFinding, readRcpt } from '#shared/email/validator/mailbox-verdict';
import { parseReply } from '#shared/email/validator/smtp-dialog';

beforeAll(async () => {
  await loadValidator();
});

describe('did_you_mean', () => {
  it.each([
    ['jane@gmial.com', 'jane@gmail.com'],
    ['jane@gmail.con', 'jane@gmail.com'],
    ['jane@gmai.com', 'jane@gmail.com'],
    ['jane@gamil.com', 'jane@gmail.com'],
    ['jane@gnail.com', 'jane@gmail.com'],
    ['jane@gmaill.com', 'jane@gmail.com'],
    ['jane@gmail.cmo', 'jane@gmail.com'],
    ['jane@gmail.co', 'jane@gmail.com'],
    ['jane@gmail.om', 'jane@gmail.com'],
    ['jane@yahooo.com', 'jane@yahoo.com'],
    ['jane@yaho.com', 'jane@yahoo.com'],
    ['jane@yhaoo.com', 'jane@yahoo.com'],
    ['jane@yahoo.con', 'jane@yahoo.com'],
    ['jane@hotmial.com', 'jane@hotmail.com'],
    ['jane@hotmai.com', 'jane@hotmail.com'],
    ['jane@hotmail.cm', 'jane@hotmail.com'],
    ['jane@hotamil.com', 'jane@hotmail.com'],
    ['jane@outlok.com', 'jane@outlook.com'],
    ['jane@outllook.com', 'jane@outlook.com'],
    ['jane@icloud.con', 'jane@icloud.com'],
    ['jane@iclod.com', 'jane@icloud.com'],
    ['jane@googlemial.com', 'jane@googlemail.com'],
    ['jane@protonmial.com', 'jane@protonmail.com'],
    ['jane@comcats.net', 'jane@comcast.net'],
    ['jane@sbcglobl.net', 'jane@sbcglobal.net'],
    ['Jane.Doe@example.con', 'Jane.Doe@example.com'],
    ['jane@example.cpm', 'jane@example.com'],
    ['jane@acme.ogr', 'jane@acme.org'],
    ['jane@acme.nte', 'jane@acme.net'],
    ['jane@outlook.con', 'jane@outlook.com'],
    ['jane@gmal.com', 'jane@gmail.com'],
  ])('%s → %s', (address, expected) => {
    const at = address.lastIndexOf('@');
    const suggestion = didYouMean(address.slice(0, at), address.slice(at + 1));
    expect(suggestion).toBe(expected);
  });

  it.each([
    ...POPULAR_DOMAINS,
    'ymail.com',
    'mail.com',
    'email.com',
    'gmx.at',
    'hotmail.de',
    'outlook.de',
    'yahoo.co.jp',
    'aim.com',
    'aon.com',
    'ge.com',
    'me.com',
    'live.co.uk',
    'example.com',
    'example.co.uk',
    'acme.org',
    'mit.edu',
    'gov.uk',
    'hotmart.com',
    'mailinator.com',
    'protonmail.ch',
    'hotmail.gr',
    'wikipedia.org',
    'company.io',
  ])('no suggestion for %s', (domain) => {
    expect(didYouMean('jane', domain)).toBeNull();
  });

  it('counts a transposition as one edit', () => {
    expect(editDistance('gmial.com', 'gmail.com')).toBe(1);
    expect(editDistance('hotmial.com', 'hotmail.com')).toBe(1);
    expect(editDistance('abc', 'abc')).toBe(0);
  });
});

const reply = (line: string) => parseReply([line]);

describe('reading RCPT TO answers', () => {
  it.each([
    ['250 2.1.5 Recipient OK', 'accepted'],
    ['550 5.1.1 No such user here', 'refused'],
    ['550 5.1.10 RESOLVER.ADR.RecipientNotFound', 'refused'],
    ['550 5.2.1 Mailbox disabled', 'refused'],
    ['550 No such user', 'refused'],
    ["553 sorry, that domain isn't in my list of allowed rcpthosts", 'refused'],
    ['550 5.4.1 Recipient address rejected: Access denied', 'refused'],
    ['552 5.2.2 Mailbox full', 'full'],
    ['452 4.2.2 The email account that you tried to reach is over quota', 'full'],
    ['451 4.7.1 Greylisted, please try again later', 'temporary'],
    ['450 4.2.1 The user you are trying to contact is receiving mail too quickly', 'temporary'],
    ['421 4.7.0 Try again later, closing connection', 'temporary'],
    ['550 5.7.1 Service unavailable; client host blocked using Spamhaus', 'blocked'],
    ['554 5.7.1 Relay access denied', 'blocked'],
    ['550 Your IP is on a blocklist', 'blocked'],
    ['554 Rejected due to poor reputation', 'blocked'],
  ])('%s → %s', (line, kind) => {
    expect(readRcpt(reply(line)).kind).toBe(kind);
  });

  it('never carries the address into a reason (logs hold ids only)', () => {
    const answer = readRcpt(reply('550 5.1.1 <jane.doe@example.com>: Recipient address rejected: jane.doe@example.com unknown'));
    expect(answer).toEqual({ kind: 'refused', why: '550 5.1.1 <<address>>: Recipient address rejected: <address> unknown' });
  });

  it('parses enhanced codes and multi-line replies', () => {
    expect(parseReply(['250-mx.example.com', '250-PIPELINING', '250 STARTTLS'])).toEqual({
      code: 250,
      enhanced: undefined,
      text: 'mx.example.com PIPELINING STARTTLS',
    });
    expect(reply('550 5.1.1 <x@y> unknown')).toEqual({ code: 550, enhanced: '5.1.1', text: '<x@y> unknown' });
  });
});

describe('the verdict', () => {
  const accepted = { kind: 'accepted' } as const;
  it.each([
    [accepted, false, undefined, 'deliverable', false],
    [accepted, true, undefined, 'risky', true],
    [accepted, 'temporary', undefined, 'retry', null],
    [accepted, null, undefined, 'unknown', null],
    [accepted, false, 'Microsoft 365 (Exchange Online Protection)', 'unknown', null],
    [accepted, true, 'Yahoo / AOL', 'unknown', null],
    [{ kind: 'refused', why: '550 5.1.1' }, false, undefined, 'undeliverable', false],
    [{ kind: 'full', why: '552' }, false, undefined, 'risky', false],
    [{ kind: 'temporary', why: '451' }, false, undefined, 'retry', false],
    [{ kind: 'refused', why: '550 5.1.1' }, 'temporary', undefined, 'undeliverable', null],
    [{ kind: 'blocked', why: '554' }, false, undefined, 'unknown', null],
  ] as const)('%j, catch-all %j, provider %s → %s', (answer, catchAll, provider, deliverability, isCatchAll) => {
    expect(mailboxFinding(answer, catchAll, provider)).toMatchObject({ deliverability, isCatchAll });
  });

  it('knows the accept-all providers by their MX host names', () => {
    expect(acceptAllProvider('contoso-com.mail.protection.outlook.com')).toBe(ACCEPT_ALL_PROVIDERS[0]!.provider);
    expect(acceptAllProvider('mta7.am0.yahoodns.net.')).toBe('Yahoo / AOL');
    expect(acceptAllProvider('gmail-smtp-in.l.google.com')).toBeUndefined();
  });
});

describe('the score with deliverability', () => {
  const good = {
    is_valid: true,
    mx_record_count: 1,
    connectable_mx_record_count: 1,
    can_connect: true,
    is_username_generic: false,
    is_alias: false,
    is_disposable: false,
  };
  it('caps risky at 50 and undeliverable at 10; deliverable and unknown keep the sum', () => {
    expect(computeScore(scoreSignals(good), 'deliverable')).toBe(100);
    expect(computeScore(scoreSignals(good), 'unknown')).toBe(100);
    expect(computeScore(scoreSignals(good), 'risky')).toBe(50);
    expect(computeScore(scoreSignals(good), 'undeliverable')).toBe(10);
  });
});
