import { indexKey, tableKey } from '#shared/db/key-template';

/**
 * The single-table key design, written once: each access pattern is one
 * declaration (see key-template.ts), the item's keys and the query's
 * partition both come from it. docs/data-model.md shows the same templates
 * with the same placeholders; a test holds the two equal.
 *
 * Every partition key of tenant data starts with the account id, so a read
 * with another account's id can only miss (404), never leak.
 */

/** The authenticated user: a token's account and contact. */
export interface Owner {
  accountId: string;
  contactId: string;
}

/** The placeholders of a user's keys. */
export const ownerValues = (owner: Owner) => ({ acct: owner.accountId, user: owner.contactId });

/** The filterable state of a conversation, one gsi2 partition per combination (8 in all). */
export interface ConversationState {
  muted: boolean;
  pinned: boolean;
  archived: boolean;
}
const bit = (on: boolean) => (on ? '1' : '0');
/** `<state>` of the conversation state partitions. */
export const stateCode = (s: ConversationState) => `M${bit(s.muted)}P${bit(s.pinned)}A${bit(s.archived)}`;

/** Ready and queued outboxes spread over this many index partitions, so no one of them takes every add. */
export const OUTBOX_SHARDS = 8;
/** `<shard>` of an outbox's index entries. */
export const outboxShard = (outboxId: string) => parseInt(outboxId.slice(0, 2), 16) % OUTBOX_SHARDS;

/**
 * A username as uniqueness compares it: compatibility forms folded (NFKC: a fullwidth `Ａ` is `A`, `ﬁ` is `fi`, a
 * decomposed `é` the composed one), then case, fully (`ß` and `SS` are one: upper-casing first folds what lower-casing
 * alone keeps). Guards written before 2026-11-28 were lower-cased only: for a name these forms change (`Straße`), the
 * old guard is left behind when its contact is renamed or deleted, and no name folds to it (docs/data-model.md).
 */
export const usernameFold = (username: string) => username.normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC');

export const keys = {
  account: tableKey('ACC#<acct>', 'ACCOUNT'),
  /** A contact; a deleted one stays as a tombstone (`deleted_at`), so messages it sent still show it as it was. */
  contact: tableKey('ACC#<acct>', 'CONTACT#<ct>'),
  /** gsi1: the account's live contacts, newest first (left out once deleted). */
  contacts: indexKey('gsi1', 'ACC#<acct>#CONTACTS', '<ct>'),
  /** Uniqueness guard: one live contact per username, compared ignoring case (usernameFold). */
  username: tableKey('ACC#<acct>#USERNAME#<username>', 'USERNAME', { username: (u) => usernameFold(u) }),
  group: tableKey('ACC#<acct>', 'GROUP#<grp>'),
  /** gsi1: the account's groups, newest first. */
  groups: indexKey('gsi1', 'ACC#<acct>#GROUPS', '<grp>'),
  /** gsi2: a group by its id alone, for the admin command line's member commands. */
  groupById: indexKey('gsi2', 'GROUPID#<grp>', 'GROUP'),
  /** A group's members, one item each, in their own partition (a send reads them in one Query). */
  groupMember: tableKey('ACC#<acct>#GROUP#<grp>', 'MEMBER#<ct>'),
  /** gsi1: the groups a contact is in, so deleting the contact leaves each of them. */
  memberships: indexKey('gsi1', 'ACC#<acct>#CT#<ct>#GROUPS', '<grp>'),
  /**
   * A credential, looked up by hash alone (the bearer token is the only thing
   * a request brings): a contact's user token or an account's secret key.
   */
  token: tableKey('TOKEN#<token_hash>', 'TOKEN'),
  /** gsi1: a contact's user tokens, newest first. */
  contactTokens: indexKey('gsi1', 'ACC#<acct>#CT#<ct>#TOKENS', '<tok>'),
  /** gsi2: one user token by its id, to revoke it. */
  tokenById: indexKey('gsi2', 'TOKENID#<tok>', 'TOKEN'),
  /** gsi1: an account's secret keys, newest first. */
  secretKeys: indexKey('gsi1', 'ACC#<acct>#KEYS', '<key>'),
  /** gsi2: one secret key by its id, to revoke it. */
  secretKeyById: indexKey('gsi2', 'KEYID#<key>', 'KEY'),

  /** Conversations and the messages in them belong to one user: the token's contact. */
  conversation: tableKey('ACC#<acct>#USER#<user>#CONV#<conv>', 'CONV'),
  /** gsi1: the user's conversations, newest first by id. */
  conversations: indexKey('gsi1', 'ACC#<acct>#USER#<user>#CONVS', '<conv>'),
  /** gsi2: the same, split by state (muted, pinned, archived), so every filter reads only matches. */
  conversationsInState: indexKey('gsi2', 'ACC#<acct>#USER#<user>#CONVS#<state>', '<conv>'),
  /** Uniqueness guard: one conversation per contact or group per user. */
  conversationTarget: tableKey('ACC#<acct>#USER#<user>#CONVFOR#<target>', 'CONVFOR'),

  /**
   * A thread holds each message once: the thread of two contacts (`<thread>`
   * is their two ids, sorted, joined by `+`) or of a group (`<thread>` is the
   * group id). Text, reactions and attachments are there, so an edit or a
   * reaction is one write whatever the audience.
   */
  threadMessage: tableKey('ACC#<acct>#THREAD#<thread>', 'MSG#<msg>'),
  /**
   * A message as one participant has it: an entry in their conversation's
   * partition (their read state), sorted below the conversation item
   * (`#` < `C`): one newest-first Query returns the conversation, proving it
   * exists and is the caller's, then the page of entries.
   */
  message: tableKey('ACC#<acct>#USER#<user>#CONV#<conv>', '#MSG#<msg>'),
  /** Finds a participant's conversation and the thread from the message id alone (the path of /v1/messages/{id}). */
  messageLocator: tableKey('ACC#<acct>#USER#<user>#MSG#<msg>', 'MSG'),
  /** gsi2: all of a user's message entries, newest first. */
  userMessages: indexKey('gsi2', 'ACC#<acct>#USER#<user>#MSGS', '<msg>'),
  /**
   * A user's events (GET /v1/events, the realtime frames), numbered without
   * a gap by the feed writer (shared/events/append.ts); expire after
   * EVENT_RETENTION_DAYS.
   */
  userEvent: tableKey('ACC#<acct>#USER#<user>#EVENTS', 'EVT#<seq>'),
  /**
   * An open WebSocket of the user (one per device), in the partition of the
   * user's events: the stream hands a partition's changes over in order, so
   * a connection's replay and the live frames after it cannot cross
   * (shared/realtime/push.ts). One Query finds a user's connections.
   * Expires a little after API Gateway's 2-hour connection limit.
   */
  connection: tableKey('ACC#<acct>#USER#<user>#EVENTS', 'CONN#<connection>'),
  /** The account's events (GET /v1/events with a secret key, the webhooks' bodies), numbered the same way. */
  accountEvent: tableKey('ACC#<acct>#EVENTS', 'AEVT#<seq>'),

  idempotency: tableKey('ACC#<acct>#IDEM#<key_hash>', 'IDEM'),

  /**
   * A durable job (shared/jobs/): work that follows a commit, recorded in its
   * transaction. `<subject>` names what it works on: `MSG#<msg>` (a group
   * message's delivery, kept afterwards as the list its retraction must
   * reach, then the retraction itself), `CONV#<conv>`, `LIST#<list>`,
   * `CONTACT#<ct>` or `GROUP#<grp>` (what a deletion leaves to purge),
   * `IMPORT#<imp>` (a CSV import into a list), `EXPORT#<exp>` (a list's CSV
   * export being written).
   */
  job: tableKey('ACC#<acct>#JOB#<subject>', 'JOB'),
  /** gsi2: unfinished jobs by the time they are due (their chain's lease ends), so the sweeper takes up those past it. */
  pendingJobs: indexKey('gsi2', 'JOB#PENDING', '<ms>'),

  /** An uploaded file (shared/files/): its owner, what the upload promised, and the messages attaching it (`refs`). */
  file: tableKey('ACC#<acct>#FILE#<file>', 'FILE'),
  /** gsi2: files never attached, by the time they may be deleted (24 h after the upload URL was made), for the sweeper. */
  unattachedFiles: indexKey('gsi2', 'FILE#UNATTACHED', '<ms>'),

  /** Global: hands out blocks of email ids, one atomic ADD per block (hi/lo). */
  idBlocks: tableKey('COUNTER#EMAIL_IDS', 'COUNTER'),
  /** Page indexes (collections) of the account's standalone emails and of its lists. */
  accountEmails: tableKey('ACC#<acct>#COLL#EMAILS', 'COLL'),
  accountLists: tableKey('ACC#<acct>#COLL#LISTS', 'COLL'),
  /** A list is also the page index of its own emails. */
  list: tableKey('ACC#<acct>#LIST#<list>', 'LIST'),
  /** A CSV import into a list (shared/email/imports.ts): its upload, how far it went, its counts; expires 30 days after it was made. */
  listImport: tableKey('ACC#<acct>#LIST#<list>#IMPORT#<imp>', 'IMPORT'),
  /** Global: makes a new list's id unique in the deployment; expires a day later, when no new id can equal it. */
  listIdGuard: tableKey('LISTID#<list>', 'LISTID'),
  email: tableKey('ACC#<acct>#EMAIL#<email>', 'EMAIL'),
  /** Second level of a collection's page index: live members per bucket, for one block of sequence numbers. */
  block: tableKey('<collection>#BLOCK#<block>', 'BLOCK'),
  /** gsi1: a collection's block items, so a purge finds them. */
  blocks: indexKey('gsi1', '<collection>#BLOCKS', '<block>'),
  /** gsi1: members of a collection in sequence order (page-number pagination). */
  members: indexKey('gsi1', '<collection>#MEMBERS', '<seq>'),
  /**
   * A CSV export of a list (shared/email/exports.ts): its filter, state and
   * how far its job got (the open upload, its parts, the last member
   * written). In a partition of its own, so the list's pages never read it.
   */
  listExport: tableKey('ACC#<acct>#LIST#<list>#EXPORT#<exp>', 'EXPORT'),
  /** gsi1: a list's exports, so that the list's purge finds them and deletes their files. */
  listExports: indexKey('gsi1', 'ACC#<acct>#LIST#<list>#EXPORTS', '<exp>'),
  /** One item per address in a list: makes "already in the list" an atomic check. */
  listAddress: tableKey('ACC#<acct>#LIST#<list>#ADDR#<address>', 'ADDR', { address: (a) => a.toLowerCase() }),

  /** An account's webhook endpoints, in one partition: the change stream's consumer reads them with one Query per account. */
  webhook: tableKey('ACC#<acct>#WEBHOOKS', 'WEBHOOK#<whk>'),
  /**
   * How many endpoints the account has, changed in each create's and delete's
   * transaction (the limit holds against creates racing each other). In a
   * partition of its own: the stream consumer's Query of the endpoints never reads it.
   */
  webhookCount: tableKey('ACC#<acct>#WEBHOOKCOUNT', 'COUNT'),
  /** gsi2: an endpoint by its id alone, for the admin command line. */
  webhookById: indexKey('gsi2', 'WEBHOOKID#<whk>', 'WEBHOOK'),
  /** One delivery attempt of an event to an endpoint (`webhook deliveries`), newest last; expires after 30 days. */
  webhookAttempt: tableKey('ACC#<acct>#WEBHOOK#<whk>#ATTEMPTS', '<ms>#<evt>#<attempt>'),

  /** Work stored but not yet handed to the queue (transactional outbox), swept if a crash strands it. */
  outbox: tableKey('ACC#<acct>#OUTBOX#<uuid>', 'OUTBOX'),
  /** gsi2: outboxes ready to send, oldest first, over OUTBOX_SHARDS partitions. */
  readyOutboxes: indexKey('gsi2', 'OUTBOX#READY#<shard>', '<ms>'),
  /** gsi2: outboxes whose work was queued, by the time after which the recovery pass checks its emails finished. */
  dueOutboxes: indexKey('gsi2', 'OUTBOX#DUE#<shard>', '<ms>'),
  /** gsi2: one account's outboxes waiting for credits, oldest first. */
  awaitingOutboxes: indexKey('gsi2', 'ACC#<acct>#OUTBOX#AWAITING', '<ms>'),
  /** gsi1: every account's outboxes waiting for credits, for the sweeper. */
  allAwaitingOutboxes: indexKey('gsi1', 'OUTBOX#AWAITING', '<ms>'),
} as const;
