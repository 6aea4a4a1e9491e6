import * as v from 'valibot';
import { txUpdate, type NamedItems } from '#shared/db/batch';
import { attr, condition, update } from '#shared/db/expression';
import { parseItem } from '#shared/db/item-schema';
import { conditionHeld, deleteItem, getItem, putNew, query, updateItem, type Item } from '#shared/db/items';
import { keys } from '#shared/db/keys';

/**
 * An uploaded file's record: who uploaded it, what its upload URL allows
 * (name, content type, exact size), whether the object is there, and the
 * messages that attach it. The object lives while `refs` is not empty;
 * a file never attached is deleted once its `<ms>` in the unattached index
 * has passed.
 */
export interface FileRecord {
  id: string;
  account_id: string;
  /** The uploader: only they may attach it. */
  contact_id: string;
  name: string;
  content_type: string;
  size: number;
  /** `pending` until the object is found in storage; `deleting` once nothing attaches it and its deletion began. */
  status: 'pending' | 'uploaded' | 'deleting';
  created_at: number;
  /** When a message first attached it (its object is tagged attached from then). */
  attached_at: number | null;
  /** How many messages attach it now. */
  ref_count: number;
}

/** Messages one file may be attached to at once: bounds the record's set of them. */
export const MAX_FILE_REFS = 1_000;
/** An upload never attached is deleted this long after its URL was made. */
export const UNATTACHED_MS = 24 * 60 * 60_000;

// Built in a /* @__PURE__ */ call, so that esbuild drops it from functions that never read this item (shared/db/item-schema.ts).
const fileItem = /* @__PURE__ */ (() =>
  v.object({
    id: v.string(),
    account_id: v.string(),
    contact_id: v.string(),
    name: v.string(),
    content_type: v.string(),
    size: v.number(),
    status: v.picklist(['pending', 'uploaded', 'deleting']),
    created_at: v.number(),
    attached_at: v.nullish(v.number(), null),
    refs: v.optional(v.set(v.string())),
  }))();

function toFile(item: Item): FileRecord {
  const { refs, ...file } = parseItem(fileItem, item);
  return { ...file, ref_count: refs?.size ?? 0 };
}

const fileKey = (accountId: string, id: string) => keys.file.key({ acct: accountId, file: id });
const status = attr('status');

export async function putFile(f: Omit<FileRecord, 'attached_at' | 'ref_count' | 'status'>, createdMs: number): Promise<void> {
  await putNew({
    ...fileKey(f.account_id, f.id),
    ...keys.unattachedFiles.entry({ ms: createdMs + UNATTACHED_MS }),
    type: 'file',
    ...f,
    status: 'pending',
  });
}

export async function getFile(accountId: string, id: string): Promise<FileRecord | undefined> {
  const item = await getItem(fileKey(accountId, id), true);
  return item && toFile(item);
}

/** The object was found in storage. */
export const markUploaded = (f: Pick<FileRecord, 'account_id' | 'id'>) =>
  conditionHeld(updateItem(fileKey(f.account_id, f.id), update().set`${status} = ${'uploaded'}`.when`${status} = ${'pending'}`));

/**
 * Transaction parts of a message attaching files: each file gains the
 * message in its `refs` (a set, so a retried write adds it once) and
 * leaves the unattached index. Each holds only if the file is still the
 * sender's and uploaded (a deletion that began sets `deleting` first).
 */
export function attachParts(files: Pick<FileRecord, 'account_id' | 'id' | 'contact_id'>[], messageId: string, now: number): NamedItems {
  return files.map((f) => [
    `file:${f.id}`,
    txUpdate(
      fileKey(f.account_id, f.id),
      update().add`refs ${new Set([messageId])}`.set`attached_at = if_not_exists(attached_at, ${now})`.remove`gsi2pk, gsi2sk`
        .when`${status} = ${'uploaded'} AND contact_id = ${f.contact_id} AND (attribute_not_exists(refs) OR size(refs) < ${MAX_FILE_REFS})`,
    ),
  ]);
}

/** Transaction parts of a message letting files go (deleted, or its attachments removed): each loses the message from `refs`. */
export function releaseParts(accountId: string, fileIds: string[], messageId: string): NamedItems {
  return fileIds.map((id) => [`release:${id}`, txUpdate(fileKey(accountId, id), update().delete`refs ${new Set([messageId])}`)]);
}

/** The message lets the file go, outside a transaction (a purge's step); a file already gone is no error. */
export const releaseRef = (accountId: string, id: string, messageId: string) =>
  conditionHeld(updateItem(fileKey(accountId, id), update().delete`refs ${new Set([messageId])}`.when`attribute_exists(pk)`));

/**
 * Starts a file's deletion when nothing attaches it: true when it is (or
 * already was) `deleting`, false when some message attaches it again or
 * the record is gone.
 */
export function claimDeletion(accountId: string, id: string): Promise<boolean> {
  return conditionHeld(
    updateItem(fileKey(accountId, id), update().set`${status} = ${'deleting'}`.when`attribute_exists(pk) AND attribute_not_exists(refs)`),
  );
}

/** The record goes last, once its object is deleted. */
export const deleteFileRecord = (accountId: string, id: string) =>
  deleteItem(fileKey(accountId, id), condition`${status} = ${'deleting'}`).catch((error: Error) => {
    if (error.name !== 'ConditionalCheckFailedException') throw error;
  });

/** Files never attached whose time is up, the longest overdue first. */
export async function dueUnattachedFiles(nowMs: number, limit = 100): Promise<{ accountId: string; id: string }[]> {
  const index = keys.unattachedFiles;
  const items = await query(
    { index: index.index, partition: index.partition(), sort: ['<', keys.unattachedFiles.sortKey({ ms: nowMs })] },
    limit,
    1,
  );
  return items.map((item) => ({ accountId: String(item.account_id), id: String(item.id) }));
}
