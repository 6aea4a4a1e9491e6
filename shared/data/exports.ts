import * as v from 'valibot';
import { batchGet, txCheck, txPut, type TransactItem } from '#shared/db/batch';
import { attr, condition, update } from '#shared/db/expression';
import { parseItem } from '#shared/db/item-schema';
import { conditionHeld, getItem, query, updateItem, type Item, type Key } from '#shared/db/items';
import { keys } from '#shared/db/keys';
import { EXPORT_RETENTION_DAYS } from '#shared/files/settings';

/**
 * A list's CSV export: its filter, its state, and how far the job writing
 * it got. The job's state lives here rather than in the job's cursor
 * because it is more than a number: the open multipart upload, the ETag of
 * every part sent, and the sequence number of the last member the parts
 * hold. Parts advance it one at a time (`part_count` is the condition), so
 * a run that died after sending a part but before recording it sends the
 * same part again, and one that recorded it goes on from after it.
 */
export const DELIVERABILITIES = ['deliverable', 'undeliverable', 'risky', 'unknown'] as const;
export type Deliverability = (typeof DELIVERABILITIES)[number];

export interface ExportRecord {
  id: string;
  account_id: string;
  list_id: number;
  /** Null: every email of the list. */
  deliverability: Deliverability[] | null;
  status: 'processing' | 'completed';
  /** Rows (besides the header) in the parts sent so far; all of them once completed. */
  row_count: number;
  created_at: number;
  completed_at: number | null;
  /** The multipart upload, once the CSV outgrew one part. */
  upload_id: string | null;
  /** ETags of the parts sent, in order. */
  etags: string[];
  /** The last member's sequence number in the parts sent; -1 before the first. */
  after_seq: number;
  /** The parts hold every member: only completing the upload is left. */
  read_done: boolean;
}

// Built in a /* @__PURE__ */ call, so that esbuild drops it from functions that never read this item (shared/db/item-schema.ts).
const exportItem = /* @__PURE__ */ (() =>
  v.object({
    id: v.string(),
    account_id: v.string(),
    list_id: v.number(),
    deliverability: v.nullish(v.array(v.picklist(DELIVERABILITIES)), null),
    status: v.picklist(['processing', 'completed']),
    row_count: v.number(),
    created_at: v.number(),
    completed_at: v.nullish(v.number(), null),
    upload_id: v.nullish(v.string(), null),
    etags: v.optional(v.array(v.string()), []),
    after_seq: v.number(),
    read_done: v.optional(v.boolean(), false),
  }))();

const toExport = (item: Item): ExportRecord => parseItem(exportItem, item);

export interface ExportRef {
  account_id: string;
  list_id: number;
  id: string;
}

const exportKey = (r: ExportRef) => keys.listExport.key({ acct: r.account_id, list: r.list_id, exp: r.id });
const listKey = (accountId: string, listId: number) => keys.list.key({ acct: accountId, list: listId });
const status = attr('status');

const withoutUpload = ({ upload_id: _upload, ...rest }: ExportRecord) => rest;

/** Transaction parts creating the export: its record, on the condition that the list exists (named `list`). */
export function exportParts(r: ExportRecord): [name: string, item: TransactItem][] {
  return [
    [
      'export',
      txPut(
        // No upload yet is no attribute (not a null): recording one is conditional on its absence.
        {
          ...exportKey(r),
          ...keys.listExports.entry({ acct: r.account_id, list: r.list_id, exp: r.id }),
          type: 'export',
          ...withoutUpload(r),
          expires_at: r.created_at + EXPORT_RETENTION_DAYS * 86_400,
        },
        condition`attribute_not_exists(pk)`,
      ),
    ],
    ['list', txCheck(listKey(r.account_id, r.list_id), condition`attribute_exists(pk)`)],
  ];
}

export async function getExport(r: ExportRef): Promise<ExportRecord | undefined> {
  const item = await getItem(exportKey(r), true);
  return item && toExport(item);
}

/** The export, only while its list exists too (one call for both): a deleted list's exports are gone with it. */
export async function getListExport(r: ExportRef): Promise<ExportRecord | undefined> {
  const items = await batchGet([exportKey(r), listKey(r.account_id, r.list_id)], true);
  const found = items.find((item) => item.type === 'export');
  return found && items.length === 2 ? toExport(found) : undefined;
}

/** Up to `limit` of a list's exports, found through `gsi1` (those made before it carried them are left to their TTL). */
export async function listExports(accountId: string, listId: number, limit: number): Promise<{ id: string; key: Key }[]> {
  const items = await query(
    { index: keys.listExports.index, partition: keys.listExports.partition({ acct: accountId, list: listId }) },
    limit,
    1,
  );
  return items.map((item) => ({ id: item.id as string, key: { pk: item.pk as string, sk: item.sk as string } }));
}

/** Records the upload the parts go to; false when another run recorded one first. */
export const recordUpload = (r: ExportRef, uploadId: string) =>
  conditionHeld(updateItem(exportKey(r), update().set`upload_id = ${uploadId}`.when`attribute_not_exists(upload_id)`));

/** Records part `etags.length + 1`, sent: the rows it held and the last member in it. False when a run recorded it first. */
export function recordPart(r: ExportRecord, etag: string, afterSeq: number, rows: number, readDone: boolean): Promise<boolean> {
  return conditionHeld(
    updateItem(
      exportKey(r),
      update()
        .set`etags = list_append(if_not_exists(etags, ${[]}), ${[etag]}), after_seq = ${afterSeq}, row_count = ${r.row_count + rows}, read_done = ${readDone}`
        .when`${status} = ${'processing'} AND size(etags) = ${r.etags.length}`,
    ),
  );
}

/** The object is complete: the export shows its download from now on. */
export function markCompleted(r: ExportRecord, rowCount: number, now: number): Promise<boolean> {
  return conditionHeld(
    updateItem(
      exportKey(r),
      update().set`${status} = ${'completed'}, row_count = ${rowCount}, completed_at = ${now}`.remove`upload_id`
        .when`${status} = ${'processing'}`,
    ),
  );
}
