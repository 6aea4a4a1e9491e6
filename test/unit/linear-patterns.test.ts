import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { AUTHORIZATION_PATTERN } from '#shared/data/tokens';
import { acceptAllProvider, describeReply, readRcpt } from '#shared/email/validator/mailbox-verdict';
import { parseReply } from '#shared/email/validator/smtp-dialog';
import { checkSyntax, prepareSyntax } from '#shared/email/validator/syntax';
import { bearerToken } from '#shared/http/authenticate';
import { isForm, prototypeKeyIn } from '#shared/http/body';
import { integerField } from '#shared/http/fields';
import { attachmentsInput } from '#shared/http/messaging-schemas';
import { conversationId, emailId, tokenId, type PathId } from '#shared/http/path-ids';
import { createContactBody } from '#shared/http/platform-schemas';
import { reactionName } from '#shared/messaging/reactions';
import { redactText } from '#shared/util/redact';
import { dispatch } from '../../scripts/local/api-gateway.ts';
import { invokeSource } from '../../scripts/local/lambda.ts';

/** A path id read as a route reads it: the id, or the 404 it answers. */
function readId(path: PathId<unknown>, raw: string): unknown {
  try {
    return path.read({ id: raw, token_id: raw });
  } catch (error) {
    return error;
  }
}

/**
 * Every pattern applied to text from users or from the network, fed 100 KB
 * built to make a backtracking pattern retry (a long run without the
 * character it needs next, a long run of what it repeats). A linear pattern
 * takes about a millisecond on that; a quadratic one seconds (the log
 * redactor took 10 s, the SMTP reply describer 0.25 s on 16 KB). The bound
 * is generous for a busy machine, and each input gets the best of three runs.
 */
const SIZE = 100_000;
const BOUND_MS = 50;

const runs = (unit: string) => unit.repeat(Math.ceil(SIZE / unit.length)).slice(0, SIZE);
/** The usual suspects: one character repeated, a run with no `@`, separators without what must follow them. */
const adversarial = (extra: string[] = []) => [runs('a'), runs(' '), runs('a@'), runs('@'), runs('/'), runs('.a'), ...extra];

function bestOfThree(work: () => unknown): number {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    work();
    best = Math.min(best, performance.now() - started);
  }
  return best;
}

const cases: [name: string, apply: (input: string) => unknown, inputs: string[]][] = [
  ['the log redactor', redactText, adversarial([runs('tok_'), `Bearer${runs(' ')}`, runs('a@b.c '), runs('Bearer ')])],
  ['the SMTP reply describer', (text) => describeReply({ code: 550, enhanced: '5.1.1', text }), adversarial()],
  ['the SMTP reply parser', (text) => parseReply([`250-${text}`, `250 ${text}`]), adversarial([runs('5.1.1 '), runs('250-')])],
  ['the RCPT answer reader (block texts)', (text) => readRcpt({ code: 550, enhanced: undefined, text }), adversarial([runs('block')])],
  ['the provider rules on an MX host name', acceptAllProvider, adversarial([runs('mail.protection.outlook.')])],
  ['address syntax', checkSyntax, adversarial([`a@${runs('ü')}.com`, `${runs('a')}@example.com`, `a@${runs('xn--')}`, `a@${runs('a-')}`])],
  ['the form content type', isForm, adversarial([`application/x-www-form-urlencoded${runs(' ')}x`])],
  ['the gateway Authorization check', (text) => AUTHORIZATION_PATTERN.test(text), adversarial([`Bearer${runs(' ')}x`])],
  ['the bearer token reader', bearerToken, adversarial([`Bearer ${runs('a ')}`])],
  [
    'path ids',
    (text) => [readId(conversationId, text), readId(emailId, text), readId(tokenId, text)],
    adversarial([runs('1'), `conv_${runs('A')}`, `tok_${runs('A')}`]),
  ],
  [
    'contact fields',
    (text) => v.safeParse(createContactBody, { username: text, phone_number: `+${text}`, avatar_url: `https://${text}` }),
    adversarial([runs('1'), runs('+1')]),
  ],
  ['form parameter names', (text) => prototypeKeyIn([text]), adversarial([runs('['), runs('[]')])],
  ['reaction names', (text) => v.safeParse(reactionName, text), adversarial([runs('😀')])],
  ['integers from forms', (text) => v.safeParse(integerField(0, 10), text), adversarial([runs('1'), `-${runs('1')}`])],
  [
    'attachment media types and URLs',
    (text) => v.safeParse(attachmentsInput, [{ type: 'file', url: `https://${text}`, mime_type: text }]),
    adversarial([runs('a/'), runs('.+')]),
  ],
];

describe('patterns over user and network text run in linear time', () => {
  it.each(cases)('%s: 100 KB adversarial inputs each within the bound', async (_name, apply, inputs) => {
    await prepareSyntax(inputs.map((input) => `a@${input}`));
    for (const input of inputs) {
      apply(input); // warm up: compile the pattern, load tables
      const ms = bestOfThree(() => apply(input));
      expect(ms, `${JSON.stringify(input.slice(0, 24))}… took ${ms.toFixed(1)} ms`).toBeLessThan(BOUND_MS);
    }
  });

  it('the local gateway answers an unknown 100 KB path (routing, error and request log) within the bound', async () => {
    const request = (path: string) => ({ method: 'GET', url: path, headers: {}, body: '' });
    for (const path of [`/${runs('a')}`, `/${runs('/')}a`, `/${runs('a@')}`]) {
      await dispatch('messaging', request(path), invokeSource); // warm up the handler's import
      let ms = Number.POSITIVE_INFINITY;
      for (let i = 0; i < 3; i++) {
        const started = performance.now();
        const res = await dispatch('messaging', request(path), invokeSource);
        ms = Math.min(ms, performance.now() - started);
        expect(res.statusCode).toBe(404);
      }
      expect(ms, `${path.slice(0, 24)}… took ${ms.toFixed(1)} ms`).toBeLessThan(BOUND_MS);
    }
  });
});
