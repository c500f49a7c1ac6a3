import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Writable } from 'node:stream';
import { errnoCode } from '../errno.ts';
import { ExtractError } from '../errors.ts';
import { writeFileAtomic } from './atomic.ts';
import { type Destination, describeDestination } from './destination.ts';
import { type StreamOptions, writeStream } from './open-stream.ts';
import { documentJson, jsonArrayChunks, jsonlChunks } from './json.ts';
import { explodeWarnings } from './flatten.ts';
import { mirroredPaths } from './mirror.ts';
import { drained } from './stream.ts';
import type { DocumentRecord } from './record.ts';
import type { FileFormat, OutputTarget } from './target.ts';

export type WriteOutputsOptions = {
  /** Resolves each record's `file` for a directory output; the run's working directory. */
  cwd: string;
  /** --explode: the dotted path of one Table field to give one CSV row per table row. */
  explode?: string | undefined;
  /** Where a stdout target that is not streamed is written. */
  stdout?: Writable | undefined;
  /** Warnings for the user (stderr), such as an --explode path no document has a table at. */
  warn?: ((message: string) => void) | undefined;
  /** CSV: neutralise cells a spreadsheet would run as a formula (csv.ts); false: --no-formula-protection. */
  formulaProtection?: boolean | undefined;
} & Omit<StreamOptions, 'waiting'>;

export type WriteOutputsResult = { written: string[] };

/**
 * Writes every record of the run at the end, each as its own fields (recordFields: a run's
 * report entries carry more, which no output shows). Records are written in the order given, read
 * again for each pass a format needs (CSV: its columns, then its rows): the pipeline passes
 * them in input order (the order discovery listed the files), including
 * documents completed in earlier runs, so that two runs over the same inputs write the
 * same output. Files are replaced atomically; a directory output writes one file per
 * record, each atomically. A streamed stdout target (isStreamed) has already been written
 * by createStreamWriter, so nothing is written again. A failed write is an ExtractError
 * ('output', or 'interrupted' for a wait that a signal ended) naming the output.
 */
export async function writeOutputs(
  target: OutputTarget,
  records: Iterable<DocumentRecord>,
  options: WriteOutputsOptions,
): Promise<WriteOutputsResult> {
  const warn = options.warn ?? (() => {});
  switch (target.kind) {
    case 'stdout': {
      if (target.format === 'jsonl') return { written: [] };
      const out = options.stdout;
      // The caller owns the process's streams (cli/); a stdout target without one is a bug here.
      if (out === undefined) throw new Error('writeOutputs: a stdout target needs options.stdout');
      await writeDestination(
        { kind: 'stdout' },
        await _chunks(target.format, records, options.explode, warn, undefined, options.formulaProtection),
        {
          ...options,
          waiting: warn,
          what: 'the output',
        },
      );
      return { written: ['-'] };
    }
    case 'file': {
      // A CSV replaced keeps its header's columns: a script or a database reading it by position finds them again.
      const keep =
        target.format === 'csv' ? await (await import('./csv-writer.ts')).csvHeaderOf(target.path) : undefined;
      const chunks = await _chunks(target.format, records, options.explode, warn, keep, options.formulaProtection);
      await writeDestination({ kind: 'file', path: target.path }, chunks, { ...options, what: 'the output' });
      return { written: [target.path] };
    }
    case 'stream': {
      const chunks = await _chunks(target.format, records, options.explode, warn, undefined, options.formulaProtection);
      await writeDestination(target.destination, chunks, { ...options, waiting: warn, what: 'the output' });
      return { written: [target.destination.path] };
    }
    case 'dir': {
      if (options.explode !== undefined) warn('--explode applies to CSV only; the directory output keeps tables whole');
      // Two passes over the records, which may be read from disk: their names, then each record.
      const paths = mirroredPaths(
        Array.from(records, (r) => r.file),
        options.cwd,
        target.path,
      );
      const made = new Set<string>();
      let i = 0;
      for (const record of records) {
        const path = paths[i++];
        if (path === undefined) continue;
        const dir = dirname(path);
        if (!made.has(dir)) await mkdir(dir, { recursive: true });
        made.add(dir);
        try {
          await writeFileAtomic(path, [documentJson(record)]);
        } catch (err) {
          throw _writeError({ kind: 'file', path }, 'the output', err);
        }
      }
      return { written: paths };
    }
  }
}

export type DestinationOptions = StreamOptions & {
  stdout?: Writable | undefined;
  /** What is written, for messages: "the output", "the report". */
  what: string;
};

/**
 * Writes `chunks` wherever a destination is: stdout, a file (atomically, through its links),
 * a stream. A reader of stdout that leaves early (`| head`) is no failure: the results are in
 * the journal, as for streamed records (createStreamWriter). Any other failure says what, where
 * and what to do.
 */
export async function writeDestination(
  destination: Destination,
  chunks: Iterable<string> | AsyncIterable<string>,
  options: DestinationOptions,
): Promise<void> {
  try {
    if (destination.kind === 'stdout') {
      if (options.stdout === undefined) throw new Error('writeDestination: stdout needs options.stdout');
      await _toStdout(options.stdout, chunks);
    } else if (destination.kind === 'file') {
      await mkdir(dirname(destination.path), { recursive: true });
      await writeFileAtomic(destination.path, chunks);
    } else await writeStream(destination, chunks, options);
  } catch (err) {
    throw _writeError(destination, options.what, err);
  }
}

async function _toStdout(out: Writable, chunks: Iterable<string> | AsyncIterable<string>): Promise<void> {
  let failure: unknown;
  // Left attached: an EPIPE may be emitted after the last write, and an 'error' with no listener would crash.
  out.on('error', (err) => {
    failure ??= err;
  });
  for await (const chunk of chunks) {
    if (failure !== undefined || out.destroyed) break;
    if (!out.write(chunk)) await drained(out);
  }
  const code = errnoCode(failure);
  if (failure !== undefined && code !== 'EPIPE' && code !== 'ERR_STREAM_DESTROYED') throw failure;
}

/** Why a write failed, in the user's words, ending with what to do; a failure that is not the file system's is a bug, passed on. */
function _writeError(destination: Destination, what: string, err: unknown): unknown {
  const where = describeDestination(destination);
  if (err instanceof Error && err.name === 'AbortError')
    return new ExtractError(
      'interrupted',
      `${what} was not written to ${where}: stopped by a signal while waiting for its reader`,
      {
        cause: err,
      },
    );
  const code = errnoCode(err);
  if (code === undefined || code.startsWith('ERR_')) return err;
  const why = WHY[code] ?? 'the system refused the write';
  return new ExtractError('output', `cannot write ${what} to ${where} (${code}): ${why}`, { cause: err });
}

const WHY: Record<string, string> = {
  ENOSPC: 'no space left on its device: free some space or choose another path',
  EDQUOT: 'the disk quota is used up: free some space or choose another path',
  EACCES: 'permission denied: fix its permissions or choose another path',
  EPERM: 'permission denied: fix its permissions or choose another path',
  EROFS: 'its file system is read-only: choose another path',
  EPIPE: 'its reader closed it before everything was written: keep the reader open to the end, or write to a file',
  ENXIO: 'nobody opened it for reading: start its reader first, or write to a file',
  EBADF: 'the file descriptor is not open for writing: open it in the shell (N>FILE), or write to a file',
  ECONNREFUSED: 'nothing listens on that socket: start its reader first, or write to a file',
  EEXIST: 'it is not a regular file, and is not replaced: choose another path',
  ENOENT: 'its directory does not exist: create it or choose another path',
  EISDIR: 'it is a directory: name a file',
  ELOOP: 'its symlinks loop: fix the link or choose another path',
};

async function _chunks(
  format: FileFormat,
  records: Iterable<DocumentRecord>,
  explode: string | undefined,
  warn: (message: string) => void,
  keep?: readonly string[],
  protect?: boolean,
): Promise<Iterable<string> | AsyncIterable<string>> {
  // csv-stringify loads only for a CSV output. Two passes over the records (the columns, then
  // the rows), which may be read from disk rather than held (batch/records.ts).
  if (format === 'csv') {
    const { csvChunksFrom, learnColumns } = await import('./csv-writer.ts');
    const source = () => records;
    const flattener = await learnColumns(source, undefined, explode, keep);
    for (const w of explodeWarnings(flattener, explode, records)) warn(w);
    return csvChunksFrom(source, flattener, protect !== false);
  }
  if (format === 'json') return jsonArrayChunks(records);
  return jsonlChunks(records);
}
