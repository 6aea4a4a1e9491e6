import * as v from 'valibot';
import { batchGet, transactNamed, txPut, txUpdate, type TransactItem } from '#shared/db/batch';
import { attr, condition, update, type Update } from '#shared/db/expression';
import { parseItem } from '#shared/db/item-schema';
import { conditionHeld, getItem, updateItem } from '#shared/db/items';
import { keys } from '#shared/db/keys';

/**
 * A CSV import into an email list: where its upload goes, what the first
 * pass found (rows, the address column, where the rows begin), how far
 * the second pass went (`rows_done`, `next_byte`: the byte the next row
 * starts at) and the counts so far. The counts move with `rows_done` in
 * one conditional write, so a chunk run twice counts once.
 */
export type ImportStatus = 'awaiting_upload' | 'importing' | 'completed' | 'error';

export interface ImportRecord {
  id: string;
  account_id: string;
  email_list_id: number;
  status: ImportStatus;
  /** When the upload URL stops working (Unix seconds). */
  upload_expires_at: number;
  /** Data rows, once the first pass found the file a CSV of addresses. */
  row_count: number | null;
  /** The address column's index (first pass). */
  column: number | null;
  /** The version of the object the first pass read: the second reads only that one. */
  etag: string | null;
  rows_done: number;
  next_byte: number;
  accepted_count: number;
  rejected_count: number;
  error_message: string | null;
  /** The import counts in its list's `imports_running` (from its start to its end), keeping the list processing. */
  holds_list: boolean;
  created_at: number;
}

/** Imports are kept this long after they were made (the table's TTL removes them; a deleted list's too). */
export const IMPORT_RETENTION_SECONDS = 30 * 24 * 60 * 60;

// Built in a /* @__PURE__ */ call, so that esbuild drops it from functions that never read this item (shared/db/item-schema.ts).
const importItem = /* @__PURE__ */ (() =>
  v.object({
    id: v.string(),
    account_id: v.string(),
    email_list_id: v.number(),
    status: v.picklist(['awaiting_upload', 'importing', 'completed', 'error']),
    upload_expires_at: v.number(),
    row_count: v.nullish(v.number(), null),
    column: v.nullish(v.number(), null),
    etag: v.nullish(v.string(), null),
    rows_done: v.number(),
    next_byte: v.number(),
    accepted_count: v.number(),
    rejected_count: v.number(),
    error_message: v.nullish(v.string(), null),
    holds_list: v.optional(v.boolean(), false),
    created_at: v.number(),
  }))();

const importKey = (accountId: string, listId: number, id: string) =>
  keys.listImport.key({ acct: accountId, list: String(listId), imp: id });
const keyOf = (r: Pick<ImportRecord, 'account_id' | 'email_list_id' | 'id'>) => importKey(r.account_id, r.email_list_id, r.id);
const status = attr('status');
const column = attr('column');

/** Transaction part: a new import (its id new, so an existing item means a retry of the same create). */
export const importPut = (r: ImportRecord): TransactItem =>
  txPut(
    { ...keyOf(r), type: 'list_import', ...r, expires_at: r.created_at + IMPORT_RETENTION_SECONDS },
    condition`attribute_not_exists(pk)`,
  );

export async function getImport(accountId: string, listId: number, id: string): Promise<ImportRecord | undefined> {
  const item = await getItem(importKey(accountId, listId, id), true);
  return item && parseItem(importItem, item);
}

/**
 * The import as a reader sees it: read with its list in one call, and gone
 * with the list (a deleted list's imports are 404 at once, as its exports
 * are, though the job may still be finishing). `list` says whether the list
 * exists.
 */
export async function getListImport(accountId: string, listId: number, id: string): Promise<{ record?: ImportRecord; list: boolean }> {
  const items = await batchGet([importKey(accountId, listId, id), keys.list.key({ acct: accountId, list: listId })], true);
  const found = items.find((item) => item.type === 'list_import');
  const list = items.some((item) => item.type === 'email_list');
  return { record: found && list ? parseItem(importItem, found) : undefined, list };
}

const listOf = (r: ImportRecord) => keys.list.key({ acct: r.account_id, list: r.email_list_id });

/**
 * Writes the import's change with, in the same transaction, the change of
 * its list's `imports_running`: once, as the import's condition allows
 * its change once. A list deleted meanwhile has nothing to count: the
 * import's change is written alone. True for the write that changed it.
 */
async function withList(r: ImportRecord, change: Update, delta: 1 | -1, failed = false): Promise<boolean> {
  const list = update().add`imports_running ${delta}`.when`attribute_exists(pk)`;
  // The change stream tells a failed import's release from a completed one's by this (shared/stream/account.ts).
  if (failed) list.set`failed_import = ${r.id}`;
  const codes = await transactNamed([
    ['import', txUpdate(keyOf(r), change)],
    ['list', txUpdate(listOf(r), list)],
  ]);
  if (codes.length === 0) return true;
  if (codes.includes('import')) return false;
  return conditionHeld(updateItem(keyOf(r), change));
}

/**
 * The upload is there: the import starts (true for the one write that
 * moved it), and holds its list in `processing` until it ends, so that the
 * list completes, and says so, once, after the whole file, not after each
 * chunk of it.
 */
export const markImporting = (r: ImportRecord) =>
  withList(r, update().set`${status} = ${'importing'}, holds_list = ${true}`.when`${status} = ${'awaiting_upload'}`, 1);

/** The first pass's findings, before any row is added (a second first pass of the same object finds the same). */
export const recordInspection = (r: ImportRecord, found: { rowCount: number; column: number; dataStart: number; etag: string }) =>
  conditionHeld(
    updateItem(
      keyOf(r),
      update().set`row_count = ${found.rowCount}, ${column} = ${found.column}, etag = ${found.etag}, next_byte = ${found.dataStart}`
        .when`${status} = ${'importing'} AND rows_done = ${0}`,
    ),
  );

/**
 * A chunk of rows is added: progress and counts in one write, only from
 * where the chunk started, so a chunk run again (after a crash before
 * this write, or by a second chain) counts once. False when it was counted.
 */
export const advanceImport = (
  r: ImportRecord,
  chunk: { fromRow: number; toRow: number; nextByte: number; accepted: number; rejected: number },
) =>
  conditionHeld(
    updateItem(
      keyOf(r),
      update().set`rows_done = ${chunk.toRow}, next_byte = ${chunk.nextByte}`
        .set`accepted_count = accepted_count + ${chunk.accepted}, rejected_count = rejected_count + ${chunk.rejected}`
        .when`${status} = ${'importing'} AND rows_done = ${chunk.fromRow}`,
    ),
  );

/** The import has ended: its list no longer waits for it (an import from before `holds_list` never held it). */
const ended = (r: ImportRecord, change: Update, failed = false) =>
  r.status === 'importing' && r.holds_list ? withList(r, change, -1, failed) : conditionHeld(updateItem(keyOf(r), change));

/** Every row was added. False when the record says otherwise: fewer rows done than the file had, or ended already. */
export const completeImport = (r: ImportRecord) =>
  ended(r, update().set`${status} = ${'completed'}`.when`${status} = ${'importing'} AND rows_done = row_count`);

/** The import ends in error; one already ended stays as it ended. */
export async function failImport(r: ImportRecord, message: string): Promise<boolean> {
  const fail = (from: ImportRecord) =>
    ended(from, update().set`${status} = ${'error'}, error_message = ${message}`.when`${status} = ${from.status}`, true);
  if (await fail(r)) return true;
  // Started meanwhile (by a GET that found the file): fail it as it is now, holding its list.
  const now = await getImport(r.account_id, r.email_list_id, r.id);
  return now !== undefined && now.status !== r.status && (now.status === 'awaiting_upload' || now.status === 'importing') && fail(now);
}
