import { chatEndpoint } from '#shared/http/chat';
import { deleted } from '#shared/http/endpoint';
import { deleteMessage } from '#shared/messaging/messages';

export const handler = chatEndpoint({}, async ({ principal, pathId }) => {
  await deleteMessage(principal, pathId);
  return deleted(pathId);
});
