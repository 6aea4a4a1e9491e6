/**
 * The single-table key design, written once. docs/data-model.md describes the
 * same table; every data-access module builds its keys through these helpers.
 *
 * Every partition key of tenant data starts with the account id, so a read
 * with another account's id can only miss (404), never leak.
 */
const acc = (accountId: string) => `ACC#${accountId}`;

export const keys = {
  account: (accountId: string) => ({ pk: acc(accountId), sk: 'ACCOUNT' }),
  contact: (accountId: string, contactId: string) => ({ pk: acc(accountId), sk: `CONTACT#${contactId}` }),
  group: (accountId: string, groupId: string) => ({ pk: acc(accountId), sk: `GROUP#${groupId}` }),
  /** Looked up by hash alone: the bearer token is the only thing a request brings. */
  token: (tokenHash: string) => ({ pk: `TOKEN#${tokenHash}`, sk: 'TOKEN' }),

  conversation: (accountId: string, conversationId: string) => ({
    pk: `${acc(accountId)}#CONV#${conversationId}`,
    sk: 'CONV',
  }),
  /** gsi1: an account's conversations, newest first by id. */
  conversationIndex: (accountId: string, conversationId: string) => ({
    gsi1pk: `${acc(accountId)}#CONVS`,
    gsi1sk: conversationId,
  }),
  conversationsPartition: (accountId: string) => `${acc(accountId)}#CONVS`,
  /** Uniqueness guard: one conversation per contact or group per account. */
  conversationTarget: (accountId: string, targetId: string) => ({
    pk: `${acc(accountId)}#CONVFOR#${targetId}`,
    sk: 'CONVFOR',
  }),

  message: (accountId: string, messageId: string) => ({
    pk: `${acc(accountId)}#MSG#${messageId}`,
    sk: 'MSG',
  }),
  /** gsi1: one conversation's messages; gsi2: all of an account's messages. */
  messageIndexes: (accountId: string, conversationId: string, messageId: string) => ({
    gsi1pk: `${acc(accountId)}#CONV#${conversationId}#MSGS`,
    gsi1sk: messageId,
    gsi2pk: `${acc(accountId)}#MSGS`,
    gsi2sk: messageId,
  }),
  conversationMessagesPartition: (accountId: string, conversationId: string) =>
    `${acc(accountId)}#CONV#${conversationId}#MSGS`,
  accountMessagesPartition: (accountId: string) => `${acc(accountId)}#MSGS`,

  idempotency: (accountId: string, keyHash: string) => ({ pk: `${acc(accountId)}#IDEM#${keyHash}`, sk: 'IDEM' }),
} as const;

/** Strips key attributes so a stored item can be mapped to a record. */
export function withoutKeys<T extends Record<string, unknown>>(item: T) {
  const { pk: _pk, sk: _sk, gsi1pk: _a, gsi1sk: _b, gsi2pk: _c, gsi2sk: _d, ...rest } = item;
  return rest;
}
