import type { Message } from '#shared/data/message-items';
import { withFileUrls } from '#shared/files/urls';
import { listResponse, presentMessages } from '#shared/messaging/present';
import { fittedPage } from '#shared/messaging/size';

/** Messages as a response shows them to their reader: presented, with download URLs made for this reader now. */
export async function showMessages(accountId: string, messages: Message[], options?: Parameters<typeof presentMessages>[2]) {
  return withFileUrls(accountId, await presentMessages(accountId, messages, options));
}

/** A page of messages as the response shows it, as many as one response holds (`backwards`: read with `ending_before`). */
export async function showMessagePage(accountId: string, page: { items: Message[]; hasMore: boolean }, backwards: boolean) {
  const fitted = fittedPage(await showMessages(accountId, page.items), page.hasMore, backwards);
  return listResponse(fitted.items, fitted.hasMore);
}
