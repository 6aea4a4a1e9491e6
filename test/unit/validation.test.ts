import { describe, expect, it } from 'vitest';
import type { ApiError } from '#shared/http/errors';
import { validate } from '#shared/http/validation';
import { createMessageBody, listConversationsQuery, updateConversationBody } from '#shared/http/messaging-schemas';

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

  // zod/mini prints a bare "Invalid input" for a check without a message: these keep the words clients had.
  it.each([
    ['name', '', 'Too small: expected string to have >=1 characters'],
    ['name', 'n'.repeat(256), 'Too big: expected string to have <=255 characters'],
    ['mime_type', `text/${'x'.repeat(251)}`, 'Too big: expected string to have <=255 characters'],
  ])('says why attachment %s=%j is invalid', (name, value, message) => {
    const input = { conversation_id: 'c', message: 'm', attachments: [{ type: 'file', url: 'https://a.example/f', [name]: value }] };
    expect(errorOf(() => validate(createMessageBody, input, 'body'))).toMatchObject({
      param: `attachments[0][${name}]`,
      message: `Invalid attachments[0][${name}]: ${message}`,
    });
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
});
