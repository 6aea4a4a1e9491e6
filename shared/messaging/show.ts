import type { Message } from '#shared/data/message-items';
import { withFileUrls } from '#shared/files/urls';
import { presentMessages } from '#shared/messaging/present';

/** Messages as a response shows them to their reader: presented, with download URLs made for this reader now. */
export async function showMessages(accountId: string, messages: Message[], options?: Parameters<typeof presentMessages>[2]) {
  return withFileUrls(accountId, await presentMessages(accountId, messages, options));
}
