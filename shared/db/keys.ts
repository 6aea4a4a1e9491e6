/**
 * The single-table key design, written once. docs/data-model.md describes the
 * same table; every data-access module builds its keys through these helpers.
 *
 * Every partition key of tenant data starts with the account id, so a read
 * with another account's id can only miss (404), never leak.
 */
const acc = (accountId: string) => `ACC#${accountId}`;

/** The authenticated user: a token's account and contact. */
export interface Owner {
  accountId: string;
  contactId: string;
}
const ownerOf = (owner: Owner) => `${acc(owner.accountId)}#USER#${owner.contactId}`;
const conversationPk = (owner: Owner, conversationId: string) => `${ownerOf(owner)}#CONV#${conversationId}`;
const MESSAGE_SK_PREFIX = '#MSG#';

/** The filterable state of a conversation, one gsi2 partition per combination (8 in all). */
export interface ConversationState {
  muted: boolean;
  pinned: boolean;
  archived: boolean;
}
const bit = (on: boolean) => (on ? '1' : '0');
const conversationStatePartition = (owner: Owner, s: ConversationState) =>
  `${ownerOf(owner)}#CONVS#M${bit(s.muted)}P${bit(s.pinned)}A${bit(s.archived)}`;

export const keys = {
  account: (accountId: string) => ({ pk: acc(accountId), sk: 'ACCOUNT' }),
  contact: (accountId: string, contactId: string) => ({ pk: acc(accountId), sk: `CONTACT#${contactId}` }),
  group: (accountId: string, groupId: string) => ({ pk: acc(accountId), sk: `GROUP#${groupId}` }),
  /** Looked up by hash alone: the bearer token is the only thing a request brings. */
  token: (tokenHash: string) => ({ pk: `TOKEN#${tokenHash}`, sk: 'TOKEN' }),
  /** gsi1: an account's tokens by id (creation order), for the admin list; gsi2: one token by its id, to revoke it. */
  tokenIndexes: (accountId: string, tokenId: string) => ({
    gsi1pk: `${acc(accountId)}#TOKENS`,
    gsi1sk: tokenId,
    gsi2pk: `TOKENID#${tokenId}`,
    gsi2sk: 'TOKEN',
  }),
  tokensPartition: (accountId: string) => `${acc(accountId)}#TOKENS`,
  tokenIdPartition: (tokenId: string) => `TOKENID#${tokenId}`,

  /** Conversations and the messages in them belong to one user: the token's contact (see ownerOf). */
  conversation: (owner: Owner, conversationId: string) => ({ pk: conversationPk(owner, conversationId), sk: 'CONV' }),
  /**
   * gsi1: the user's conversations, newest first by id. gsi2: the same, split
   * by state (muted, pinned, archived), so every filter reads only matches.
   */
  conversationIndexes: (owner: Owner, conversationId: string, state: ConversationState) => ({
    gsi1pk: `${ownerOf(owner)}#CONVS`,
    gsi1sk: conversationId,
    gsi2pk: conversationStatePartition(owner, state),
    gsi2sk: conversationId,
  }),
  conversationsPartition: (owner: Owner) => `${ownerOf(owner)}#CONVS`,
  conversationStatePartition: (owner: Owner, state: ConversationState) => conversationStatePartition(owner, state),
  /** Uniqueness guard: one conversation per contact or group per user. */
  conversationTarget: (owner: Owner, targetId: string) => ({
    pk: `${ownerOf(owner)}#CONVFOR#${targetId}`,
    sk: 'CONVFOR',
  }),

  /**
   * A message lives in its conversation's partition, sorted below the
   * conversation item (`#` < `C`): one newest-first Query returns the
   * conversation, proving it exists and is the caller's, then its messages.
   */
  message: (owner: Owner, conversationId: string, messageId: string) => ({
    pk: conversationPk(owner, conversationId),
    sk: `${MESSAGE_SK_PREFIX}${messageId}`,
  }),
  messageSkPrefix: MESSAGE_SK_PREFIX,
  /** Finds a message's conversation from the message id alone (the path of /v1/messages/{id}). */
  messageLocator: (owner: Owner, messageId: string) => ({ pk: `${ownerOf(owner)}#MSG#${messageId}`, sk: 'MSG' }),
  /** gsi2: all of a user's messages, newest first. */
  messageIndex: (owner: Owner, messageId: string) => ({ gsi2pk: `${ownerOf(owner)}#MSGS`, gsi2sk: messageId }),
  userMessagesPartition: (owner: Owner) => `${ownerOf(owner)}#MSGS`,

  idempotency: (accountId: string, keyHash: string) => ({ pk: `${acc(accountId)}#IDEM#${keyHash}`, sk: 'IDEM' }),

  /** A deletion whose children (messages, emails) are still being purged; gsi2 lets the sweeper finish it. */
  purge: (accountId: string, parent: string) => ({ pk: `${acc(accountId)}#PURGE#${parent}`, sk: 'PURGE' }),
  purgePending: (createdAtMs: number) => ({ gsi2pk: 'PURGE#PENDING', gsi2sk: pad(createdAtMs) }),
  purgePendingPartition: 'PURGE#PENDING',
} as const;

/** Strips key attributes so a stored item can be mapped to a record. */
export function withoutKeys<T extends Record<string, unknown>>(item: T) {
  const { pk: _pk, sk: _sk, gsi1pk: _a, gsi1sk: _b, gsi2pk: _c, gsi2sk: _d, ...rest } = item;
  return rest;
}

/**
 * Email validation entities. Ids are numbers (see shared/data/numeric-ids.ts);
 * sequence numbers are zero-padded so they sort as strings.
 */
export const pad = (n: number) => String(n).padStart(15, '0');

export const OUTBOX_SHARDS = 8;
const outboxShard = (outboxId: string) => parseInt(outboxId.slice(0, 2), 16) % OUTBOX_SHARDS;

export const emailKeys = {
  /** Global: hands out blocks of ids, one atomic ADD per block (hi/lo). */
  idBlocks: () => ({ pk: 'COUNTER#EMAIL_IDS', sk: 'COUNTER' }),
  /** Page index of the account's standalone emails and of its lists. */
  accountEmails: (accountId: string) => ({ pk: `${acc(accountId)}#COLL#EMAILS`, sk: 'COLL' }),
  accountLists: (accountId: string) => ({ pk: `${acc(accountId)}#COLL#LISTS`, sk: 'COLL' }),
  /** A list is also the page index of its own emails. */
  list: (accountId: string, listId: number) => ({ pk: `${acc(accountId)}#LIST#${listId}`, sk: 'LIST' }),
  email: (accountId: string, emailId: number) => ({ pk: `${acc(accountId)}#EMAIL#${emailId}`, sk: 'EMAIL' }),
  /** Second level of a collection's page index: live members per bucket, for one block of sequence numbers. */
  block: (collectionPk: string, block: number) => ({ pk: `${collectionPk}#BLOCK#${block}`, sk: 'BLOCK' }),
  /** gsi1: a collection's block items, so a purge finds them. */
  blockIndex: (collectionPk: string, block: number) => ({ gsi1pk: `${collectionPk}#BLOCKS`, gsi1sk: pad(block) }),
  blocksPartition: (collectionPk: string) => `${collectionPk}#BLOCKS`,
  /** gsi1: members of a collection in sequence order (page-number pagination). */
  member: (collectionPk: string, seq: number) => ({ gsi1pk: `${collectionPk}#MEMBERS`, gsi1sk: pad(seq) }),
  membersPartition: (collectionPk: string) => `${collectionPk}#MEMBERS`,
  /** One item per address in a list: makes "already in the list" an atomic check. */
  listAddress: (accountId: string, listId: number, address: string) => ({
    pk: `${acc(accountId)}#LIST#${listId}#ADDR#${address.toLowerCase()}`,
    sk: 'ADDR',
  }),
  /** Work stored but not yet handed to the queue (transactional outbox), swept if a crash strands it. */
  outbox: (accountId: string, outboxId: string) => ({ pk: `${acc(accountId)}#OUTBOX#${outboxId}`, sk: 'OUTBOX' }),
  /** gsi2: outboxes ready to send, oldest first; and per account, those waiting for credits. */
  outboxReady: (outboxId: string, createdAtMs: number) => ({
    gsi2pk: `OUTBOX#READY#${outboxShard(outboxId)}`,
    gsi2sk: pad(createdAtMs),
  }),
  outboxAwaiting: (accountId: string, createdAtMs: number) => ({
    gsi2pk: `${acc(accountId)}#OUTBOX#AWAITING`,
    gsi2sk: pad(createdAtMs),
  }),
  /** gsi2: an outbox whose work was queued, by the time after which the recovery pass checks its emails finished. */
  outboxDue: (outboxId: string, dueMs: number) => ({ gsi2pk: `OUTBOX#DUE#${outboxShard(outboxId)}`, gsi2sk: pad(dueMs) }),
  outboxDuePartitions: () => Array.from({ length: OUTBOX_SHARDS }, (_, shard) => `OUTBOX#DUE#${shard}`),
  /** Ready outboxes spread over OUTBOX_SHARDS partitions, so no one index partition takes every add. */
  outboxReadyPartitions: () => Array.from({ length: OUTBOX_SHARDS }, (_, shard) => `OUTBOX#READY#${shard}`),
  /** gsi1 of awaiting outboxes: all accounts', for the sweeper. */
  outboxAwaitingAll: 'OUTBOX#AWAITING',
  outboxAwaitingPartition: (accountId: string) => `${acc(accountId)}#OUTBOX#AWAITING`,
} as const;
