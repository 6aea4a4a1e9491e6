import { derivedId } from '#shared/util/ids';
import type { Change } from '#shared/stream/change';

/** The events a committed change can mean, as webhooks deliver them and realtime frames carry them (docs/webhooks.md). */
export const EVENT_TYPES = [
  'conversation.created',
  'conversation.updated',
  'conversation.deleted',
  'message.created',
  'message.updated',
  'message.deleted',
  'email_list.completed',
  'email_list.insufficient_credits',
  'email_list.error',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export const isEventType = (value: string): value is EventType => (EVENT_TYPES as readonly string[]).includes(value);

/** An event as it leaves the system: the body of a webhook's POST, and (in its user's view) a realtime frame. */
export interface StreamEvent {
  id: string;
  type: EventType;
  created_at: number;
  /** Messaging events: the user whose view `data.object` is (for `message.*` in the account's view, the sender). */
  user?: string;
  data: { object: unknown };
}

export interface AccountEvent {
  accountId: string;
  event: StreamEvent;
}

/**
 * An event's id comes from the change itself (its item and stream sequence
 * number) and the type, so a redelivered stream batch yields the very same
 * id, and a receiver sees one id however often it arrives.
 */
export const eventId = (change: Change, type: string, view = '') =>
  derivedId('evt', change.createdMs, `${change.pk}\n${change.sk}\n${change.sequenceNumber}\n${type}${view && `\n${view}`}`);

/** Whether two presented objects are the same to a reader (a change of bookkeeping only is no event). */
export const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * One event of a change. Several views of one change (one per participant)
 * each get their own id: `view` names it.
 */
export function event(change: Change, accountId: string, type: EventType, object: unknown, user?: string, view?: string): AccountEvent {
  return {
    accountId,
    event: {
      id: eventId(change, type, view),
      type,
      created_at: Math.floor(change.createdMs / 1000),
      ...(user === undefined ? {} : { user }),
      data: { object },
    },
  };
}
