import { describe, expect, it } from 'vitest';
import type { ApiError } from '#shared/http/errors';
import { validate, type Schema } from '#shared/http/validation';
import { createMessageBody, listConversationsQuery, updateConversationBody, updateMessageBody } from '#shared/http/messaging-schemas';

const errorOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return (error as ApiError).toBody().error;
  }
  throw new Error('expected a validation error');
};

describe('edge validation', () => {
  it('names the first unknown parameter even when another value is also wrong', () => {
    expect(errorOf(() => validate(listConversationsQuery, { limit: '0', colour: 'x' }, 'query'))).toMatchObject({
      code: 'parameter_unknown',
      param: 'colour',
    });
  });

  it.each([
    [
      'beside a bad value in the same attachment',
      [{ type: 'image', url: 'http://a.example', mimetype: 'image/png' }],
      'attachments[0][mimetype]',
    ],
    [
      'beside a bad value in another attachment',
      [
        { type: 'file', url: 'https://a.example', size: 'x' },
        { type: 'file', url: 'https://a.example', extra: 1 },
      ],
      'attachments[1][extra]',
    ],
  ])('names an unknown attachment key %s', (_where, attachments, param) => {
    const input = { conversation_id: 'c', message: 'm', attachments };
    expect(errorOf(() => validate(createMessageBody, input, 'body'))).toMatchObject({ code: 'parameter_unknown', param });
  });

  it('says a required parameter is missing', () => {
    expect(errorOf(() => validate(createMessageBody, { message: 'hi' }, 'body'))).toMatchObject({
      code: 'parameter_missing',
      param: 'conversation_id',
    });
  });

  it('names the nested form parameter inside a union', () => {
    const input = { conversation_id: 'c', message: 'm', attachments: [{ type: 'file', url: 'ftp://x' }] };
    expect(errorOf(() => validate(createMessageBody, input, 'body'))).toMatchObject({ param: 'attachments[0][url]' });
  });

  it('coerces form strings and JSON values to the same result', () => {
    const fromForm = validate(updateConversationBody, { is_pinned: '1', is_muted: 'false', archived_at: '1700000000' }, 'body');
    const fromJson = validate(updateConversationBody, { is_pinned: true, is_muted: false, archived_at: 1700000000 }, 'body');
    expect(fromForm).toEqual(fromJson);
    expect(validate(updateConversationBody, { archived_at: '', pinned_message_id: '' }, 'body')).toEqual({
      archived_at: null,
      pinned_message_id: null,
    });
  });

  it.each([
    ['name', 'n'.repeat(256), 'must be at most 255 characters'],
    ['name', 'a\nb', 'must not contain control characters'],
    ['mime_type', `text/${'x'.repeat(251)}`, 'must be at most 255 characters'],
    ['mime_type', 'png', 'must be a media type such as image/png'],
    ['size', -1, 'must be a non-negative integer'],
    ['name', 5, 'must be a string or empty, got a number'],
  ])('says why attachment %s=%j is invalid', (name, value, message) => {
    const input = { conversation_id: 'c', message: 'm', attachments: [{ type: 'file', url: 'https://a.example/f', [name]: value }] };
    expect(errorOf(() => validate(createMessageBody, input, 'body'))).toMatchObject({
      param: `attachments[0][${name}]`,
      message: `Invalid attachments[0][${name}]: ${message}`,
    });
  });

  it('takes an attachment as the API shows it: null or an empty value for name, mime_type and size is not given', () => {
    for (const none of [null, '']) {
      const input = {
        conversation_id: 'c',
        message: 'm',
        attachments: [{ type: 'file', url: 'https://a.example/f', name: none, mime_type: none, size: none }],
      };
      const parsed = validate(createMessageBody, input, 'body') as { attachments: Record<string, unknown>[] };
      expect(parsed.attachments[0]).toMatchObject({ name: null, mime_type: null, size: null });
    }
  });

  it.each([
    ['limit', '1.5'],
    ['limit', '1e2'],
    ['limit', ' 5'],
    ['muted', 'TRUE'],
    ['muted', 'yes'],
  ])('rejects %s=%j', (name, value) => {
    expect(errorOf(() => validate(listConversationsQuery, { [name]: value }, 'query')).param).toBe(name);
  });

  const attachment = { type: 'file', url: 'https://a.example/f' };
  const message = { conversation_id: 'c', message: 'm' };
  const contacts = (n: number) => Array.from({ length: n }, (_, i) => `c${i}`);
  it.each<[string, Schema<unknown>, Record<string, unknown>, string, string]>([
    // A list where one object belongs is the wrong kind of value, not an object with every key missing.
    ['an attachment', createMessageBody, { ...message, attachments: [[]] }, 'attachments[0]', 'must be an object, got an array'],
    ['a reaction map', updateMessageBody, { reactions: [['a']] }, 'reactions[0]', 'must be an object, got an array'],
    ['a float timestamp', updateConversationBody, { archived_at: 1.5 }, 'archived_at', 'must be an integer, got a number'],
    ['an integer past 2^53', listConversationsQuery, { limit: 1e20 }, 'limit', 'must be an integer, got a number'],
    // A negative number is an integer, just too small: said so, form or JSON
    [
      'a negative size',
      createMessageBody,
      { ...message, attachments: [{ ...attachment, size: '-5' }] },
      'attachments[0][size]',
      'must be a non-negative integer',
    ],
    [
      'a negative size (JSON)',
      createMessageBody,
      { ...message, attachments: [{ ...attachment, size: -5 }] },
      'attachments[0][size]',
      'must be a non-negative integer',
    ],
    ['a negative timestamp', updateConversationBody, { archived_at: '-5' }, 'archived_at', 'must be a non-negative integer'],
    ['a negative limit', listConversationsQuery, { limit: '-5' }, 'limit', 'must be at least 1'],
    [
      '11 attachments',
      createMessageBody,
      { ...message, attachments: Array(11).fill(attachment) },
      'attachments',
      'must contain at most 10 attachments',
    ],
    [
      '51 reaction maps',
      updateMessageBody,
      { reactions: contacts(51).map((c) => ({ [c]: 'a' })) },
      'reactions',
      'a request can name at most 50 reactions',
    ],
    ['1,001 contacts', updateMessageBody, { reactions: { wave: contacts(1001) } }, 'reactions[wave]', 'must name at most 1000 contacts'],
  ])('says what is wrong with %s', (_what, schema, input, param, message) => {
    expect(errorOf(() => validate(schema, input, 'body'))).toEqual({
      type: 'invalid_request_error',
      code: 'parameter_invalid',
      param,
      message: `Invalid ${param}: ${message}`,
    });
  });

  it('says an absent required attachment field is missing', () => {
    const input = { conversation_id: 'c', message: 'm', attachments: [{ url: 'https://a.example/f' }] };
    expect(errorOf(() => validate(createMessageBody, input, 'body'))).toMatchObject({
      code: 'parameter_missing',
      param: 'attachments[0][type]',
      message: 'Missing required parameter: attachments[0][type]',
    });
  });
});
