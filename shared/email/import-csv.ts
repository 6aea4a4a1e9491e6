import { Readable, Transform, type TransformCallback } from 'node:stream';
import type { ReadableStream as WebStream } from 'node:stream/web';
import type { Info } from 'csv-parse';

/**
 * Reading an import's CSV, streamed: csv-parse (RFC 4180 quoting, a
 * well-kept parser rather than a hand-written one) over the object's
 * bytes as they arrive, with backpressure, so memory stays flat in the
 * file's size. Two readers: the first pass judges the whole file before
 * anything is added; the second reads rows from a byte offset on, each
 * with the offset of the row after it, so a run resumes where the last
 * one stopped without reading the file again from the start.
 */

export const MAX_IMPORT_ROWS = 1_000_000;
export const MAX_IMPORT_BYTES = 100 * 1024 * 1024;
/** A row longer than this (1 MiB: room for a long notes column) is no row of a contact list: bounds what the parser buffers. */
const MAX_ROW_CHARS = 1024 * 1024;

const parserOptions = (bom: boolean) => ({
  bom,
  info: true as const,
  // Exports from spreadsheets and CRMs mix line ends, and their rows do not all have every column.
  record_delimiter: ['\r\n', '\n', '\r'],
  relax_column_count: true,
  skip_empty_lines: true,
  trim: true,
  max_record_size: MAX_ROW_CHARS,
});

/** Refuses bytes that are not UTF-8 text, as they pass: what the parser would otherwise turn into replacement characters. */
class Utf8Check extends Transform {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  bytes = 0;
  constructor(private readonly maxBytes: number) {
    super();
  }
  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) return done(new ImportFileError(`the file is larger than ${MAX_IMPORT_BYTES / 1024 / 1024} MB`));
    if (chunk.includes(0)) return done(new ImportFileError('the file is not text (it contains NUL bytes); upload a CSV'));
    try {
      this.decoder.decode(chunk, { stream: true });
    } catch {
      return done(new ImportFileError('the file is not valid UTF-8; save it as CSV UTF-8'));
    }
    done(null, chunk);
  }
  override _flush(done: TransformCallback): void {
    try {
      this.decoder.decode();
    } catch {
      return done(new ImportFileError('the file is not valid UTF-8 (it ends inside a character)'));
    }
    done();
  }
}

/** Why a file is not a CSV of addresses: the import's error message. */
export class ImportFileError extends Error {}

/** The object's bytes stopped arriving (the connection closed mid-body): the file may be fine, the read is not. */
export class StorageReadError extends Error {}

interface ParsedRow {
  record: string[];
  info: Info;
}

async function* rowsOf(body: WebStream<Uint8Array>, bom: boolean, maxBytes: number): AsyncGenerator<ParsedRow> {
  // Imported by the first file read, not with the bundle (Node keeps the module): the purge worker runs every kind
  // of job, and most of its cold starts read no file (docs/performance.md, Cold start).
  const { parse, CsvError } = await import('csv-parse');
  const source = Readable.fromWeb(body);
  const check = new Utf8Check(maxBytes);
  const parser = parse(parserOptions(bom));
  // pipe() carries data and backpressure, not errors: each stage's error ends the parser, which the loop below reads.
  source.on('error', (error) => check.destroy(new StorageReadError(error.message, { cause: error })));
  check.on('error', (error) => parser.destroy(error));
  source.pipe(check).pipe(parser);
  try {
    for await (const row of parser as AsyncIterable<ParsedRow>) yield row;
  } catch (error) {
    if (error instanceof ImportFileError || error instanceof StorageReadError) throw error;
    // csv-parse's errors name the line and what it found there. Every one of them is about the file (not all codes
    // start with CSV_: a quote inside an unquoted field is INVALID_OPENING_QUOTE), and reading it again fails the same way.
    if (error instanceof CsvError && error.code === 'CSV_MAX_RECORD_SIZE') {
      throw new ImportFileError(
        `a row (line ${(error as { lines?: number }).lines ?? '?'}) is longer than ${MAX_ROW_CHARS / 1024 / 1024} MiB: no row of a contact list is`,
      );
    }
    if (error instanceof CsvError) throw new ImportFileError(`the file is not a valid CSV: ${error.message}`);
    throw error;
  }
}

const isEmailHeader = (cell: string) => cell.toLowerCase() === 'email';

export interface Inspection {
  rowCount: number;
  /** The address column's index. */
  column: number;
  /** The byte the first data row starts at (after the header, if any). */
  dataStart: number;
}

/**
 * The first pass: the whole file judged before anything is added. The
 * address column is the one headed `email` (any case); without one, the
 * first column, under a header unless the first row already holds an
 * address. Throws ImportFileError when the file is not a CSV of addresses.
 */
export async function inspectCsv(body: WebStream<Uint8Array>): Promise<Inspection> {
  let column = 0;
  let dataStart = 0;
  let first = true;
  let rowCount = 0;
  let addresses = 0;
  let headed = false;
  for await (const { record, info } of rowsOf(body, true, MAX_IMPORT_BYTES)) {
    if (first) {
      first = false;
      const emailColumn = record.findIndex(isEmailHeader);
      headed = emailColumn >= 0;
      if (headed || !(record[0] ?? '').includes('@')) {
        column = Math.max(emailColumn, 0);
        dataStart = info.bytes;
        continue;
      }
    }
    rowCount++;
    if (rowCount > MAX_IMPORT_ROWS) throw new ImportFileError(`the file has more than ${MAX_IMPORT_ROWS} rows`);
    if ((record[column] ?? '').includes('@')) addresses++;
  }
  if (rowCount === 0) throw new ImportFileError('the file has no rows of addresses');
  // A column headed `email` is the file's word for where its addresses are: its rows are judged one by one (rejected
  // when they are not addresses). Without that header, a file none of whose first cells holds an address is not one.
  if (addresses === 0 && !headed) {
    throw new ImportFileError('no column of the file holds email addresses: head the address column `email`');
  }
  return { rowCount, column, dataStart };
}

export interface Row {
  address: string;
  /** The byte the next row starts at. */
  nextByte: number;
}

/** The second pass: addresses of the rows from byte `fromByte` on (a row's start), each with the offset after it. */
export async function* csvRows(body: WebStream<Uint8Array>, column: number, fromByte: number): AsyncGenerator<Row> {
  // A BOM is only at the very start; the first pass has judged the rest already.
  for await (const { record, info } of rowsOf(body, fromByte === 0, Number.POSITIVE_INFINITY)) {
    yield { address: record[column] ?? '', nextByte: fromByte + info.bytes };
  }
}
