import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { ExtractError } from '../errors.ts';
import {
  type OutputTarget,
  type StreamWriter,
  createStreamWriter,
  prepareOutput,
  resolveOutput,
  writeFileAtomic,
} from '../outputs/index.ts';
import { appendDurably, cannotGrow, jsonlRows, openGrowingFile } from '../outputs/growing-file.ts';
import type { RecordSource } from '../outputs/csv-writer.ts';
import { documentJson, jsonLine } from '../outputs/json.ts';
import type { Inbox, SeenRow } from './inbox.ts';
import { documentFileName } from './file-names.ts';

/**
 * Where processed documents go: the batch client's writers and formats, fed from the inbox.
 * Every file output holds every document of the inbox's `seen` table, so after a crash it can
 * be brought back in line rather than trusted; none replaces what it did not write:
 * - JSON Lines and CSV files grow as `extract watch`'s do (outputs/growing-file.ts): appended
 *   (and fsynced) per batch, never rewritten, so a batch costs its own records whatever the
 *   file holds; on start a torn last record is cut off and the documents the file lacks are
 *   appended. A CSV keeps its header (outputs/append-csv.ts: a column first seen later joins at
 *   the right, a CSV of other columns is refused); rows the inbox does not know stay.
 * - JSON file: refused, as watch refuses it: one array cannot grow, and rewriting it whole per
 *   batch is what grows with the file.
 * - directory: one `<document_id>.json` per document, the id encoded injectively
 *   (file-names.ts): file names repeat across documents, the document_id does not.
 * - stdout: JSON Lines as documents are processed; what was printed cannot be taken
 *   back, so a crash between printing and marking may print a document again on restart.
 * The review list (review.jsonl in the data directory) is rewritten from the inbox.
 */
export type RecordSink = {
  /** Brings the outputs up to date with the inbox when the receiver starts. */
  start(inbox: Inbox): Promise<void>;
  /** Writes documents processed since the last call (the inbox's unwritten ones) and marks them written. */
  write(inbox: Inbox): Promise<void>;
  /** Where the records go, for the start-up line. */
  readonly description: string;
  /** True when records go to a file or directory (each pass ends with an fsync), not stdout. */
  readonly toDisk: boolean;
};

export const REVIEW_FILE = 'review.jsonl';
/** Beside the review list: per document, the CSV columns that the cap left out. */
const OVERFLOW_FILE = 'overflow.jsonl';
/**
 * A CSV output keeps at most this many columns (the document columns included), the first seen;
 * an event of thousands of distinct fields cannot make every row that wide. The columns left
 * out are listed per document in OVERFLOW_FILE; the JSON outputs keep every field.
 */
export const CSV_MAX_COLUMNS = 500;

export type SinkOptions = {
  out: string | undefined;
  format: string | undefined;
  cwd: string;
  stdout: Writable;
  dataDir: string;
  warn: (message: string) => void;
  /** CSV: neutralise cells a spreadsheet would run as a formula (csv.ts); false: --no-formula-protection. */
  formulaProtection?: boolean | undefined;
  /** Whole-file outputs are written from the inbox in pages of about this many bytes of records. */
  pageBytes?: number | undefined;
};

/** The default page: a few MiB of records at a time, whatever the number of documents. */
const PAGE_BYTES = 4 * 1024 * 1024;

/** Resolves -o and --format and checks the output can be written, before anything is acknowledged. */
export async function createSink(options: SinkOptions): Promise<RecordSink> {
  const target = resolveOutput({ out: options.out, format: options.format, cwd: options.cwd });
  if (target.kind === 'stdout' && target.format !== 'jsonl') {
    throw new ExtractError(
      'usage',
      `--format ${target.format} is a whole-file format and a listener never ends: pass -o FILE.${target.format}, or drop --format for JSON Lines on stdout`,
    );
  }
  if (target.kind === 'stream') {
    // Its outputs are brought back in line with the inbox after a crash, which a stream cannot be.
    throw new ExtractError(
      'usage',
      `-o ${options.out} is not a regular file (a device, a FIFO or a descriptor): extract listen writes files it can reconcile; pass -o - and redirect stdout instead`,
    );
  }
  if (target.kind === 'file' && target.format === 'json')
    throw cannotGrow(`-o ${options.out ?? target.path}`, 'listen');
  await prepareOutput(target);
  /** The JSON Lines or CSV file output, opened by start(). */
  let file: FileOutput | undefined;
  const stream: StreamWriter | undefined = target.kind === 'stdout' ? createStreamWriter(options.stdout) : undefined;
  const reviewPath = join(options.dataDir, REVIEW_FILE);
  const overflowPath = join(options.dataDir, OVERFLOW_FILE);
  const pageBytes = options.pageBytes ?? PAGE_BYTES;
  const writeReview = async (inbox: Inbox): Promise<void> => {
    await writeFileAtomic(reviewPath, _reviewLines(inbox, pageBytes));
  };
  /**
   * Writes what was processed since the last call, a page of records at a time, each page
   * marked written once it is on disk. The review list grows by the fresh documents' entries:
   * appended, not rewritten (start() rewrites it whole, which also repairs a crash between two writes).
   */
  const writeFresh = async (inbox: Inbox): Promise<void> => {
    for (let rows = inbox.unwritten(pageBytes); rows.length > 0; rows = inbox.unwritten(pageBytes)) {
      if (target.kind === 'stdout') {
        for (const row of rows) await stream?.write(row.record);
      } else if (target.kind === 'dir') {
        for (const row of rows)
          await writeFileAtomic(_documentPath(target.path, row.document_id), [documentJson(row.record)]);
      } else await file?.append(rows);
      await appendDurably(
        reviewPath,
        rows
          .filter((r) => r.null_fields.length > 0)
          .map(_reviewLine)
          .join(''),
      );
      inbox.markWritten(rows.map((r) => r.document_id));
    }
  };

  return {
    description: _describe(target),
    toDisk: target.kind !== 'stdout',
    async start(inbox) {
      if (target.kind === 'stdout') await writeFresh(inbox);
      else {
        if (target.kind === 'file' && target.format !== 'json')
          file = await _openFile(target.path, target.format, overflowPath, options.warn, options.formulaProtection);
        await _reconcile(target, inbox, file, pageBytes);
        for (let page = inbox.unwritten(pageBytes); page.length > 0; page = inbox.unwritten(pageBytes))
          inbox.markWritten(page.map((r) => r.document_id));
      }
      await writeReview(inbox);
    },
    write: writeFresh,
  };
}

type FileOutput = {
  /** Whether the file holds this document (read when it was opened). */
  holds(documentId: string): boolean;
  append(rows: readonly SeenRow[]): Promise<void>;
};

/**
 * A JSON Lines or CSV output, opened to grow (outputs/growing-file.ts, as watch opens its own).
 * A CSV's columns are capped; the columns left out go, per document, to the overflow file.
 */
async function _openFile(
  path: string,
  format: 'jsonl' | 'csv',
  overflowPath: string,
  warn: (message: string) => void,
  formulaProtection: boolean | undefined,
): Promise<FileOutput> {
  const { file, text } = await openGrowingFile(path, format);
  if (format === 'jsonl') {
    const held = new Set(jsonlRows(text).flatMap((r) => (r.document_id === null ? [] : [r.document_id])));
    return {
      holds: (id) => held.has(id),
      append: (rows) => file.append(rows.map((r) => jsonLine(r.record)).join('')),
    };
  }
  const { openCsvFile } = await import('../outputs/append-csv.ts');
  const csv = await openCsvFile(path, text, (more) => file.append(more), CSV_MAX_COLUMNS, formulaProtection);
  const held = new Set(csv.rows.map((r) => r.document_id));
  // What it held is known now: the list of its rows is not kept for the listener's life.
  csv.rows.length = 0;
  return {
    holds: (id) => held.has(id),
    async append(rows) {
      if (rows.length === 0) return;
      const { leftOut } = await csv.append(
        rows.map((r) => r.record),
        undefined,
        warn,
      );
      await appendDurably(
        overflowPath,
        leftOut
          .map((l) => `${JSON.stringify({ document_id: l.document_id, csv_columns_left_out: l.columns })}\n`)
          .join(''),
      );
    },
  };
}

/** Makes a file or directory output hold every document of the inbox, a page of records at a time. */
async function _reconcile(
  target: Exclude<OutputTarget, { kind: 'stdout' | 'stream' }>,
  inbox: Inbox,
  file: FileOutput | undefined,
  pageBytes: number,
): Promise<void> {
  if (target.kind === 'dir') {
    await mkdir(target.path, { recursive: true });
    for await (const record of _seenRecords(inbox, pageBytes)()) {
      const path = _documentPath(target.path, record.document_id ?? '');
      if (!existsSync(path)) await writeFileAtomic(path, [documentJson(record)]);
    }
    return;
  }
  if (file === undefined) return;
  for await (const page of _seenPages(inbox, pageBytes))
    await file.append(page.filter((r) => !file.holds(r.document_id)));
}

/**
 * Every document of the inbox's seen table, a page at a time, up to the last one processed when
 * the pass began; the event loop gets a turn between pages (acknowledgements wait for no output).
 */
async function* _seenPages(inbox: Inbox, pageBytes: number, upTo = inbox.lastSeenSeq()): AsyncGenerator<SeenRow[]> {
  let after = 0;
  for (;;) {
    const page = inbox.seenPage(after, upTo, pageBytes);
    if (page.length === 0) return;
    yield page;
    after = page[page.length - 1]!.inbox_seq;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** The records of _seenPages, one at a time; each call reads them again, up to the same last one. */
function _seenRecords(inbox: Inbox, pageBytes: number): RecordSource {
  const upTo = inbox.lastSeenSeq();
  return async function* () {
    for await (const page of _seenPages(inbox, pageBytes, upTo))
      for (const row of page) {
        yield row.record;
        // A turn of the event loop per record (a record can be thousands of fields to flatten):
        // the senders waiting for a 200 are answered between two, not after a whole page.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
  };
}

/** One line of review.jsonl: a document that has null fields. */
function _reviewLine(row: SeenRow): string {
  return `${JSON.stringify({ document_id: row.document_id, file_name: row.record.file, null_fields: row.null_fields })}\n`;
}

async function* _reviewLines(inbox: Inbox, pageBytes: number): AsyncGenerator<string> {
  for await (const page of _seenPages(inbox, pageBytes))
    yield page
      .filter((r) => r.null_fields.length > 0)
      .map(_reviewLine)
      .join('');
}

/** `<dir>/<encoded document_id>.json` (file-names.ts: injective, never leaves the directory). */
function _documentPath(dir: string, documentId: string): string {
  return join(dir, documentFileName(documentId));
}

function _describe(target: OutputTarget): string {
  if (target.kind === 'stdout') return 'JSON Lines on stdout';
  if (target.kind === 'dir') return `one JSON file per document in ${target.path}`;
  if (target.kind === 'stream') return `${target.format.toUpperCase()} to ${target.destination.path}`;
  return `${target.format.toUpperCase()} in ${target.path}`;
}
