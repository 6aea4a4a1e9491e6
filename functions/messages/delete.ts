import { chatEndpoint, deleted } from '#shared/http/chat';
import { deleteMessage } from '#shared/messaging/messages';

export const handler = chatEndpoint({}, async ({ principal, pathId }) => {
  await deleteMessage(principal, pathId);
  return deleted(pathId);
});
