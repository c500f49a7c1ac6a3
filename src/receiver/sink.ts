import { createReadStream, existsSync } from 'node:fs';
import { mkdir, open, readFile, truncate } from 'node:fs/promises';
import type { CsvFile } from '../outputs/append-csv.ts';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { ExtractError } from '../errors.ts';
import {
  type OutputTarget,
  type StreamWriter,
  createStreamWriter,
  prepareOutput,
  resolveOutput,
  writeDestination,
  writeFileAtomic,
} from '../outputs/index.ts';
import { readTextOrEmpty } from '../outputs/atomic.ts';
import { DOCUMENT_COLUMNS } from '../outputs/flatten.ts';
import type { RecordSource } from '../outputs/csv-writer.ts';
import { documentJson, jsonArrayChunksFrom, jsonLine } from '../outputs/json.ts';
import type { Inbox, SeenRow } from './inbox.ts';
import { hasErrno } from '../errno.ts';
import { documentFileName } from './file-names.ts';

/**
 * Where processed documents go: the batch client's writers and formats, fed from the inbox.
 * Every file output holds every document of the inbox's `seen` table, so after a crash it can
 * be brought back in line rather than trusted; none replaces what it did not write:
 * - JSON Lines file: appended (and fsynced) per batch; on start, documents missing from it
 *   are appended and a torn last line is cut off.
 * - CSV file: rewritten atomically from every record after each batch, the columns of the
 *   batch client's CSV. One that holds rows the inbox does not know when the listener starts
 *   (a batch run's, another listener's) is appended to instead, under its header, as `extract
 *   watch` appends (outputs/append-csv.ts; a CSV of other columns is refused): those rows stay.
 * - JSON file: one array, rewritten atomically from every record after each batch; refused
 *   at start when it holds a document the inbox does not know (an array cannot be appended
 *   to: what is in it would be lost).
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
  /** True when each write rewrites a whole file (JSON, CSV), so batches should be few. */
  readonly wholeFile: boolean;
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
  await prepareOutput(target);
  const csvPath = target.kind === 'file' && target.format === 'csv' ? target.path : undefined;
  /** Set at start when the CSV output holds rows of others: it is appended to, never rewritten. */
  let csv: CsvFile | undefined;
  const stream: StreamWriter | undefined = target.kind === 'stdout' ? createStreamWriter(options.stdout) : undefined;
  const reviewPath = join(options.dataDir, REVIEW_FILE);
  const overflowPath = join(options.dataDir, OVERFLOW_FILE);
  const pageBytes = options.pageBytes ?? PAGE_BYTES;
  /** A CSV file output, its columns capped; the overflow file is rewritten beside it. */
  const writeCsv = async (path: string, inbox: Inbox): Promise<void> => {
    const { csvChunksFrom, learnColumns } = await import('../outputs/csv-writer.ts');
    const source = _seenRecords(inbox, pageBytes);
    const flattener = await learnColumns(source, CSV_MAX_COLUMNS);
    await writeDestination({ kind: 'file', path }, csvChunksFrom(source, flattener), { what: 'the output' });
    // The columns left out, per document: a pass of its own, so no list of every document's is held.
    await writeFileAtomic(
      overflowPath,
      (async function* () {
        for await (const record of source()) {
          const { left } = flattener.add(record);
          if (left.length > 0)
            yield `${JSON.stringify({ document_id: record.document_id, csv_columns_left_out: left })}\n`;
        }
      })(),
    );
  };
  /** Rows appended to the CSV output, its columns capped; the columns left out go to the overflow file beside it. */
  const appendCsv = async (rows: readonly SeenRow[]): Promise<void> => {
    if (csv === undefined || rows.length === 0) return;
    const { leftOut } = await csv.append(
      rows.map((r) => r.record),
      undefined,
      options.warn,
    );
    await _appendDurably(
      overflowPath,
      leftOut
        .map((l) => `${JSON.stringify({ document_id: l.document_id, csv_columns_left_out: l.columns })}\n`)
        .join(''),
    );
  };
  const writeReview = async (inbox: Inbox): Promise<void> => {
    await writeFileAtomic(reviewPath, _reviewLines(inbox, pageBytes));
  };
  /**
   * Writes what was processed since the last call, a page of records at a time, each page
   * marked written once it is on disk. A JSON output is rewritten once (streamed from the
   * inbox), not per page. The review list grows by the fresh documents' entries: appended,
   * not rewritten (start() rewrites it whole, which also repairs a crash between two writes).
   */
  const writeFresh = async (inbox: Inbox): Promise<void> => {
    const wholeFile = target.kind === 'file' && target.format !== 'jsonl' && csv === undefined;
    if (wholeFile && inbox.unwritten(0).length > 0) {
      if (target.format === 'csv') await writeCsv(target.path, inbox);
      else
        await writeDestination(
          { kind: 'file', path: target.path },
          jsonArrayChunksFrom(_seenRecords(inbox, pageBytes)()),
          { what: 'the output' },
        );
    }
    for (let rows = inbox.unwritten(pageBytes); rows.length > 0; rows = inbox.unwritten(pageBytes)) {
      if (target.kind === 'stdout') {
        for (const row of rows) await stream?.write(row.record);
      } else if (target.kind === 'dir') {
        for (const row of rows)
          await writeFileAtomic(_documentPath(target.path, row.document_id), [documentJson(row.record)]);
      } else if (target.format === 'jsonl') {
        await _appendDurably(target.path, rows.map((r) => jsonLine(r.record)).join(''));
      } else if (target.format === 'csv') {
        await appendCsv(rows);
      }
      await _appendDurably(
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
    wholeFile: target.kind === 'file' && target.format !== 'jsonl',
    toDisk: target.kind !== 'stdout',
    async start(inbox) {
      if (target.kind === 'stdout') await writeFresh(inbox);
      else {
        if (csvPath !== undefined && (await _holdsOthers(csvPath, inbox))) {
          const { openCsvFile } = await import('../outputs/append-csv.ts');
          csv = await openCsvFile(csvPath, (text) => _appendDurably(csvPath, text), CSV_MAX_COLUMNS);
        }
        await _reconcile(target, inbox, { csv, appendCsv, writeCsv }, pageBytes);
        for (let page = inbox.unwritten(pageBytes); page.length > 0; page = inbox.unwritten(pageBytes))
          inbox.markWritten(page.map((r) => r.document_id));
      }
      await writeReview(inbox);
    },
    write: writeFresh,
  };
}

/** Makes a file or directory output hold every document of the inbox, a page of records at a time. */
async function _reconcile(
  target: Exclude<OutputTarget, { kind: 'stdout' | 'stream' }>,
  inbox: Inbox,
  csv: {
    csv: CsvFile | undefined;
    appendCsv: (rows: readonly SeenRow[]) => Promise<void>;
    writeCsv: (path: string, inbox: Inbox) => Promise<void>;
  },
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
  if (target.format === 'csv') {
    if (csv.csv === undefined) {
      await csv.writeCsv(target.path, inbox);
      return;
    }
    const held = new Set(csv.csv.rows.map((r) => r.document_id));
    for await (const page of _seenPages(inbox, pageBytes))
      await csv.appendCsv(page.filter((r) => !held.has(r.document_id)));
    return;
  }
  if (target.format !== 'jsonl') {
    await _refuseForeignJson(target.path, inbox);
    await writeDestination({ kind: 'file', path: target.path }, jsonArrayChunksFrom(_seenRecords(inbox, pageBytes)()), {
      what: 'the output',
    });
    return;
  }
  const present = await _documentIdsInJsonl(target.path);
  for await (const page of _seenPages(inbox, pageBytes)) {
    const missing = page.filter((r) => !present.has(r.document_id));
    await _appendDurably(target.path, missing.map((r) => jsonLine(r.record)).join(''));
  }
}

/**
 * Every document of the inbox's seen table, a page at a time, up to the last one processed when
 * the pass began; the event loop gets a turn between pages (acknowledgements wait for no output).
 */
async function* _seenPages(inbox: Inbox, pageBytes: number): AsyncGenerator<SeenRow[]> {
  const upTo = inbox.lastSeenSeq();
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
    let after = 0;
    for (;;) {
      const page = inbox.seenPage(after, upTo, pageBytes);
      if (page.length === 0) return;
      for (const row of page) {
        yield row.record;
        // A turn of the event loop per record (a record can be thousands of fields to flatten):
        // the senders waiting for a 200 are answered between two, not after a whole page.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      after = page[page.length - 1]!.inbox_seq;
    }
  };
}

/**
 * A JSON output is one array, rewritten whole from the inbox: a file that holds anything else
 * (an earlier listener's documents, a batch run's, not an array of records at all) would be
 * lost, so the listener does not start on it.
 */
async function _refuseForeignJson(path: string, inbox: Inbox): Promise<void> {
  const text = await readTextOrEmpty(path);
  if (text.trim() === '') return;
  let ids: unknown[] | undefined;
  try {
    const value: unknown = JSON.parse(text);
    if (Array.isArray(value))
      ids = value.map((r: unknown) =>
        typeof r === 'object' && r !== null ? Reflect.get(r, 'document_id') : undefined,
      );
  } catch {
    // Not JSON: refused below, as something this listener did not write.
  }
  const foreign = ids === undefined ? undefined : ids.filter((id) => typeof id !== 'string' || !inbox.knows(id)).length;
  if (foreign === 0) return;
  const what =
    foreign === undefined
      ? 'is not a JSON array of records'
      : `holds ${foreign} documents this listener's inbox does not know`;
  throw new ExtractError(
    'usage',
    `-o ${path} ${what}: a JSON output is rewritten whole from the inbox, which would lose them; use -o FILE.jsonl or FILE.csv (appended to), name a new file, or move this one away`,
  );
}

/**
 * Whether a CSV output holds a row the inbox does not know (or is a CSV of other columns), read
 * as a stream: a listener's own CSV, however large, is not held in memory to find out.
 */
async function _holdsOthers(path: string, inbox: Inbox): Promise<boolean> {
  const { parse } = await import('csv-parse');
  const rows = parse({ relax_column_count: true });
  // pipe() passes no error on: a file not there (ENOENT) must end the loop below, not go unheard.
  createReadStream(path)
    .on('error', (err) => rows.destroy(err))
    .pipe(rows);
  let header: string[] | undefined;
  try {
    for await (const row of rows as AsyncIterable<string[]>) {
      if (header === undefined) {
        header = row;
        if (DOCUMENT_COLUMNS.some((c, i) => header?.[i] !== c)) return true;
        continue;
      }
      const id = row[DOCUMENT_COLUMNS.indexOf('document_id')];
      if (id === undefined || !inbox.knows(id)) return true;
    }
  } catch (err) {
    if (hasErrno(err, 'ENOENT')) return false;
    throw err;
  } finally {
    rows.destroy();
  }
  return false;
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

/** The document_ids already in a JSON Lines output; a torn last line (a write cut by a kill) is removed. */
async function _documentIdsInJsonl(path: string): Promise<Set<string>> {
  const ids = new Set<string>();
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if (hasErrno(err, 'ENOENT')) return ids;
    throw err;
  }
  if (text.length > 0 && !text.endsWith('\n')) {
    const keep = text.lastIndexOf('\n') + 1;
    await truncate(path, Buffer.byteLength(text.slice(0, keep)));
    text = text.slice(0, keep);
  }
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const parsed: unknown = JSON.parse(line);
      if (
        parsed !== null &&
        typeof parsed === 'object' &&
        'document_id' in parsed &&
        typeof parsed.document_id === 'string'
      ) {
        ids.add(parsed.document_id);
      }
    } catch {
      // A line someone else wrote into the file: left alone, it names no document.
    }
  }
  return ids;
}

async function _appendDurably(path: string, text: string): Promise<void> {
  if (text === '') return;
  const handle = await open(path, 'a', 0o644);
  try {
    await handle.write(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
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
