import { beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '#shared/http/errors';
import { isForm, loadFormParser, MAX_BODY_BYTES, parseBody, parseForm } from '#shared/http/body';

// The middleware loads the form parser on the first form body; these cases call the parser directly.
beforeAll(loadFormParser);

const form = (text: string) => parseBody(text, false, 'application/x-www-form-urlencoded; charset=utf-8', ['form', 'json']);
const statusOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return (error as ApiError).status;
  }
  return 200;
};

describe('request bodies', () => {
  it('knows a form body by its media type, parameters or not', () => {
    for (const type of ['application/x-www-form-urlencoded', 'Application/X-WWW-Form-Urlencoded; charset=utf-8'])
      expect(isForm(type), type).toBe(true);
    for (const type of [undefined, '', 'application/json', 'text/plain', 'application/x-www-form-urlencodedx'])
      expect(isForm(type), String(type)).toBe(false);
  });

  it('parses Stripe-style bracket nesting', () => {
    expect(form('reactions[thumbsup][]=alice&reactions[thumbsup][]=bob&reactions[heart]=')).toEqual({
      reactions: { thumbsup: ['alice', 'bob'], heart: '' },
    });
    expect(form('attachments[0][url]=https%3A%2F%2Fx&attachments[1][type]=file')).toEqual({
      attachments: [{ url: 'https://x' }, { type: 'file' }],
    });
  });

  it("keeps a map's keys of digits as names, in the order sent, where a segment of digits is otherwise an index", () => {
    // Given reactions, a map, named by digits among other names
    const body = 'reactions[thumbsup][]=bob&reactions[100][]=carol&reactions[100][]=dave&reactions[0]=&attachments[0][url]=x';
    // When parsed as the update's form: then they are names, in order, as the JSON array form gives them
    expect(parseBody(body, false, 'application/x-www-form-urlencoded', ['form'], undefined, ['reactions'])).toEqual({
      reactions: [{ thumbsup: ['bob'] }, { '100': ['carol', 'dave'] }, { '0': '' }],
      attachments: [{ url: 'x' }],
    });
    // And without the map named, a segment of digits is an array index, as before
    expect(form('reactions[100][]=carol')).toEqual({ reactions: [['carol']] });
    // And a name holding a NUL (the parser's mark) is refused rather than taken for a name of digits
    expect(() =>
      parseBody('reactions[%00100][]=x', false, 'application/x-www-form-urlencoded', ['form'], undefined, ['reactions']),
    ).toThrow('A parameter name in the body holds a NUL character');
  });

  it('refuses a form body of more parameters than it reads, rather than dropping the rest', () => {
    const params = (n: number) => Array.from({ length: n }, (_, i) => `reactions[wave][]=c${i}`).join('&');
    expect(Object.keys(form(`${params(1099)}&message=x`))).toEqual(['reactions', 'message']);
    expect(() => form(`${params(1100)}&message=x`)).toThrow('A form body holds at most 1100 parameters');
  });

  it('keeps names an object has of its own (toString, hasOwnProperty) as the parameters they are, as JSON does', () => {
    expect(form('hasOwnProperty=1&reactions[toString][]=bob')).toEqual({ hasOwnProperty: '1', reactions: { toString: ['bob'] } });
  });

  it('keeps a list of more than 1,000 entries a list, for its schema to say how long it may be', () => {
    const body = Array.from({ length: 1001 }, (_, i) => `reactions[wave][]=c${i}`).join('&');
    const parsed = form(body) as { reactions: { wave: string[] } };
    expect(parsed.reactions.wave).toHaveLength(1001);
    expect(parsed.reactions.wave.at(-1)).toBe('c1000');
  });

  it('gives the same object for JSON', () => {
    expect(parseBody('{"a":{"b":[1]}}', false, 'application/json', ['form', 'json'])).toEqual({ a: { b: [1] } });
  });

  it('limits nesting depth and does not touch prototypes', () => {
    const deep = form('a[b][c][d][e][f][g]=1') as Record<string, unknown>;
    expect(JSON.stringify(deep)).toContain('[f][g]'); // the rest stays a flat key
    // Refused as unknown parameters at the edge; the parser below would not pollute anyway.
    expect(() => form('__proto__[admin]=1&constructor[prototype][x]=1')).toThrow('Unknown parameter: __proto__[admin]');
    expect(() => form('a[constructor][x]=1')).toThrow('Unknown parameter: a[constructor][x]');
    const polluted = parseForm('__proto__[admin]=1&constructor[prototype][x]=1');
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
    expect(Object.getPrototypeOf(polluted)).toBe(Object.prototype);
  });

  it('refuses a parameter sent empty (a removal) beside brackets under it, naming the empty one, whatever their order', () => {
    const refusal = (text: string) => {
      try {
        form(text);
      } catch (error) {
        const e = error as ApiError;
        return { status: e.status, code: e.code, param: e.param };
      }
      return undefined;
    };
    // Given a reaction's removal beside an addition to it, in either order
    // Then each is one 400 naming what the client sent, never a 200 that dropped one or a param it never sent
    for (const body of ['reactions[heart][]=dana&reactions[heart]=', 'reactions[heart]=&reactions[heart][]=dana']) {
      expect(refusal(body), body).toEqual({ status: 400, code: 'parameter_invalid', param: 'reactions[heart]' });
    }
    expect(refusal('reactions=&reactions[x][]=dana')).toMatchObject({ param: 'reactions' });
    expect(refusal('attachments=&attachments[0][type]=file&attachments[0][url]=https://e.com/a')).toMatchObject({
      param: 'attachments',
    });
    // A name of 40,000 bracket pairs beside its emptied head: read as the parser reads it (4 segments, then one key)
    expect(refusal(`reactions[heart]=&reactions[heart]${'[]'.repeat(40_000)}=x`)).toMatchObject({ param: 'reactions[heart]' });
    // While repeats of one shape, siblings, a value beside brackets (both additions) and names past the parser's depth
    // (each one key) are the lists and maps they were
    expect(form('reactions[heart]=bob&reactions[heart][]=carol')).toEqual({ reactions: { heart: ['bob', 'carol'] } });
    expect(refusal('a[b][c][d][e][f]=&a[b][c][d][e][f][g]=x')).toBeUndefined();
    expect(form('reactions[heart][]=a&reactions[heart][]=b&reactions[wave]=')).toEqual({ reactions: { heart: ['a', 'b'], wave: '' } });
    expect(form('attachments[0][type]=file&attachments[0][url]=u&attachments[1][type]=file')).toEqual({
      attachments: [{ type: 'file', url: 'u' }, { type: 'file' }],
    });
  });

  it('refuses percent-encoding that does not decode, naming the parameter, and takes what does', () => {
    const refusal = (text: string) => {
      try {
        form(text);
      } catch (error) {
        return { status: (error as ApiError).status, param: (error as ApiError).param };
      }
      return undefined;
    };
    // Not UTF-8 (%FF%FE), not hex (%ZZ), cut short (%E2%82): each named in the bracket form a client wrote
    expect(refusal('conversation_id=c&message=%FF%FE')).toEqual({ status: 400, param: 'message' });
    expect(refusal('attachments%5B0%5D%5Bname%5D=a%ZZ')).toEqual({ status: 400, param: 'attachments[0][name]' });
    expect(refusal('message=%E2%82')).toEqual({ status: 400, param: 'message' });
    expect(refusal('%ZZ=1')).toMatchObject({ status: 400 });
    // A literal percent sent encoded, plus as space, and multi-byte characters decode as before
    expect(form('message=100%25+sure+%E2%82%AC')).toEqual({ message: '100% sure €' });
  });

  it('decodes base64 bodies as API Gateway sends binary payloads, refusing bytes that are not UTF-8', () => {
    expect(parseBody(Buffer.from('a=1').toString('base64'), true, 'application/x-www-form-urlencoded', ['form'])).toEqual({ a: '1' });
    const latin1 = Buffer.from([...Buffer.from('{"name":"caf'), 0xe9, ...Buffer.from('"}')]).toString('base64');
    expect(() => parseBody(latin1, true, 'application/json', ['json'])).toThrow('Request body is not valid UTF-8');
  });

  it('refuses text that is not Unicode (a lone surrogate) anywhere in a JSON body, naming its parameter', () => {
    const refusal = (text: string) => {
      try {
        parseBody(text, false, 'application/json', ['json']);
      } catch (error) {
        return { status: (error as ApiError).status, code: (error as ApiError).code, param: (error as ApiError).param };
      }
      return undefined;
    };
    expect(refusal('{"message":"a\\ud800b"}')).toEqual({ status: 400, code: 'parameter_invalid', param: 'message' });
    expect(refusal('{"attachments":[{"name":"\\udc00"}]}')).toEqual({
      status: 400,
      code: 'parameter_invalid',
      param: 'attachments[0][name]',
    });
    expect(refusal('{"\\ud800":1}')).toMatchObject({ status: 400, code: 'parameter_invalid' });
    // A pair is one character, as any other
    expect(parseBody('{"message":"\\ud83d\\ude00"}', false, 'application/json', ['json'])).toEqual({ message: '😀' });
  });

  it('refuses a form parameter without a name rather than dropping it', () => {
    expect(() => form('message=a&=b')).toThrow('A parameter in the body has no name');
    // An empty pair (a trailing &) names nothing and holds nothing
    expect(form('message=a&')).toEqual({ message: 'a' });
  });

  it('takes UTF-8 only, uncompressed: another charset or a Content-Encoding is 415', () => {
    const json = (contentType: string, encoding?: string) => () => parseBody('{"a":"b"}', false, contentType, ['json'], encoding);
    expect(json('application/json; charset=latin1')).toThrow('charset latin1 is not supported');
    expect(statusOf(json('application/json; charset=iso-8859-1'))).toBe(415);
    expect(statusOf(json('application/json', 'gzip'))).toBe(415);
    for (const type of [
      'application/json',
      'application/json; charset=utf-8',
      'application/json;charset="UTF-8"',
      'application/json; charset=utf8',
    ])
      expect(json(type)(), type).toEqual({ a: 'b' });
    expect(json('application/json', 'identity')()).toEqual({ a: 'b' });
    // Without a body there is nothing to decode
    expect(parseBody('', false, 'application/json; charset=latin1', ['json'], 'gzip')).toEqual({});
  });

  it('treats an empty body as no parameters', () => {
    expect(parseBody(null, false, undefined, ['json'])).toEqual({});
    expect(parseBody('', false, 'application/json', ['json'])).toEqual({});
  });

  it('answers 413, 415 and 400 as docs/api-conventions.md says', () => {
    expect(statusOf(() => form(`a=${'x'.repeat(MAX_BODY_BYTES)}`))).toBe(413);
    expect(statusOf(() => parseBody('a', false, 'text/plain', ['form', 'json']))).toBe(415);
    expect(statusOf(() => parseBody('a=1', false, 'application/x-www-form-urlencoded', ['json']))).toBe(415);
    expect(statusOf(() => parseBody('{', false, 'application/json', ['json']))).toBe(400);
    expect(statusOf(() => parseBody('[]', false, 'application/json', ['json']))).toBe(400);
  });
});
