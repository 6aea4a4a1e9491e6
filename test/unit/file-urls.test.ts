import { describe, expect, it } from 'vitest';
import { eventWithFileUrls } from '#shared/files/urls';

/**
 * Events are stored with `url: null` for uploaded files; each one leaving
 * the service (a realtime frame, a webhook attempt, a page of the feed) gets
 * download URLs made then, and nothing else about it changes.
 */
describe('download URLs as an event leaves', () => {
  const attachment = {
    id: 'att_1',
    type: 'image',
    url: null,
    name: 'cat.png',
    mime_type: 'image/png',
    size: 3,
    file_id: 'file_01JD5R8Z9Q4W3X2V1T0S9R8Q7P',
  };
  const link = { id: 'att_2', type: 'file', url: 'https://example.com/a.pdf', name: null, mime_type: null, size: null, file_id: null };
  const event = (attachments: { url: string | null }[]) => ({
    id: 'evt_1',
    type: 'message.created',
    created_at: 1,
    data: { object: { id: 'msg_1', message: 'hi', attachments } },
  });

  it("fills in an uploaded file's URL, presigned for an hour, and leaves a link as it is", async () => {
    // Given a stored message event with an uploaded file and a link
    const stored = event([attachment, link]);
    // When it leaves
    const sent = await eventWithFileUrls('acct_1', stored);
    // Then the file has a presigned GET of its object, valid an hour, named for download, and the rest is unchanged
    const url = new URL(sent.data.object.attachments[0]!.url!);
    expect(url.pathname).toMatch(/\/files\/acct_1\/file_01JD5R8Z9Q4W3X2V1T0S9R8Q7P$/);
    expect(url.searchParams.get('X-Amz-Expires')).toBe('3600');
    expect(url.searchParams.get('response-content-disposition')).toBe("attachment; filename*=UTF-8''cat.png");
    expect({ ...sent.data.object.attachments[0], url: null }).toEqual(attachment);
    expect(sent.data.object.attachments[1]).toEqual(link);
    // And the stored event is not changed
    expect(stored.data.object.attachments[0]!.url).toBeNull();
  });

  it('returns events without uploaded files as they are', async () => {
    const plain = event([link]);
    expect(await eventWithFileUrls('acct_1', plain)).toBe(plain);
    const conversation = { id: 'evt_2', type: 'conversation.updated', created_at: 1, data: { object: { id: 'conv_1' } } };
    expect(await eventWithFileUrls('acct_1', conversation)).toBe(conversation);
  });
});
