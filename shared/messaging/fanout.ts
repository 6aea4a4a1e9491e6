import * as v from 'valibot';
import type { Job, JobKind, Step } from '#shared/jobs/kind';
import { CHUNK, deliverChunk, PARALLEL, retractFrom } from '#shared/messaging/delivery';
import { inParallel } from '#shared/util/parallel';

/** How long a send (or a delete) works on a group inline before the delivery queue takes the rest. */
export const INLINE_MS = 2_500;

// Built in a /* @__PURE__ */ call, as the other schemas (shared/db/item-schema.ts).
const recipientsPayload = /* @__PURE__ */ (() =>
  v.object({
    messageId: v.string(),
    groupId: v.string(),
    sender: v.string(),
    /** The message's creation time, seconds: the recipients' conversations move to it. */
    createdAt: v.number(),
    /** The group's members when the message was sent, the sender left out. */
    recipients: v.array(v.string()),
  }))();

export type Recipients = v.InferOutput<typeof recipientsPayload>;

/** One record per group message: its delivery, then its retraction, which takes the record over. */
export const messageSubject = (messageId: string) => `MSG#${messageId}`;

/** The recipients of the next step, and the progress it makes. */
function nextChunk(job: Job<Recipients>): { chunk: string[]; cursor: number; done: boolean } {
  const cursor = job.cursor + CHUNK;
  return { chunk: job.payload.recipients.slice(job.cursor, cursor), cursor, done: cursor >= job.payload.recipients.length };
}

/**
 * A group message delivered to its recipients, CHUNK at a time in one
 * transaction each. Each recipient's part is conditional, so a chunk
 * repeated (a run that died before recording its progress, a redelivered
 * message) changes nothing. Kept when done: the list a retraction must
 * reach.
 */
export const fanout: JobKind<Recipients> = {
  name: 'fanout',
  payload: recipientsPayload,
  subject: (p) => messageSubject(p.messageId),
  keep: true,
  async step(job): Promise<Step> {
    const { chunk, cursor, done } = nextChunk(job);
    if (chunk.length === 0) return { done: true };
    const p = job.payload;
    const message = {
      id: p.messageId,
      account_id: job.accountId,
      thread: p.groupId,
      contact_id: p.sender,
      created_at: p.createdAt,
      message: '',
      attachments: [],
      extras_bytes: 0,
    };
    // The message was deleted: its retraction has taken the record over, or, with no recipient left to reach, nothing is left to do.
    if (!(await deliverChunk({ message, target: { groupId: p.groupId } }, chunk))) return { done: true };
    return { cursor, done };
  },
};

/**
 * The sender's delete of a group message: recorded over its fan-out's
 * record (a delivery still running loses its lease and stops), it removes
 * the message from each recipient; the record goes when it is done.
 */
export const retraction: JobKind<Recipients> = {
  name: 'retraction',
  payload: recipientsPayload,
  subject: (p) => messageSubject(p.messageId),
  async step(job): Promise<Step> {
    const { chunk, cursor, done } = nextChunk(job);
    await inParallel(chunk, PARALLEL, async (r) => void (await retractFrom(r, job.accountId, job.payload.messageId)));
    return { cursor, done };
  },
};
