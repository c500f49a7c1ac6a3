import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, relative, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { errnoCode } from '../errno.ts';
import { ExtractError } from '../errors.ts';
import { writeFileAtomic } from './atomic.ts';
import { cannotGrow, jsonlRows, openGrowingFile } from './growing-file.ts';
import { followLinks } from './destination.ts';
import { documentJson, jsonLine } from './json.ts';
import { createStreamWriter, drained } from './stream.ts';
import { keptPath } from './mirror.ts';
import type { DocumentRecord } from './record.ts';
import type { OutputTarget } from './target.ts';

/**
 * Outputs that grow as documents complete, for `extract watch`: JSON Lines appended (a file or
 * stdout), CSV appended under one header (append-csv.ts), a folder with one file per document.
 * Files grow through growing-file.ts, as listen's do: each append reaches the disk (fsync)
 * before it resolves, a torn last record is cut off when opened. A JSON array cannot grow, and a
 * stream (a FIFO, a device) is not reopened for each document: both are refused, with what to
 * use instead.
 *
 * The appender also says which documents the output already holds (`holds`), read from the
 * file at start: a document an earlier watcher completed whose record never reached the output
 * (killed between the two) is written by the next one, and one already there is not written twice.
 */
export type Appender = {
  holds(record: DocumentRecord): boolean;
  append(records: readonly DocumentRecord[]): Promise<void>;
};

export type AppenderOptions = {
  cwd: string;
  stdout: Writable;
  /** The folder a directory output mirrors: the watched folders' common base. */
  base: string;
  explode?: string | undefined;
  /** CSV: neutralise cells a spreadsheet would run as a formula (csv.ts); false: --no-formula-protection. */
  formulaProtection?: boolean | undefined;
  warn: (message: string) => void;
};

export async function openAppender(target: OutputTarget, options: AppenderOptions): Promise<Appender> {
  const seen = new Set<string>();
  const remember = (records: Iterable<{ file: string; document_id: string | null }>): void => {
    for (const r of records) seen.add(_key(r));
  };
  const holds = (r: DocumentRecord): boolean => seen.has(_key(r));
  switch (target.kind) {
    case 'stdout': {
      if (target.format === 'json') throw cannotGrow('-o - --format json', 'watch');
      // Its listener takes EPIPE: a reader gone (`| head`) stops the watcher (exit 8), never crashes it.
      const stream = createStreamWriter(options.stdout);
      const gone = (): ExtractError =>
        new ExtractError(
          'output',
          "stdout's reader went away: the results are in the journal; restart extract watch with its reader, which writes what is missing and pays nothing again",
        );
      const csv =
        target.format === 'csv'
          ? await (await import('./append-csv.ts')).openCsvFile(
              '',
              '',
              (text) => _write(options.stdout, text),
              undefined,
              options.formulaProtection,
            )
          : undefined;
      return {
        holds,
        async append(records) {
          if (stream.closed) throw gone();
          if (csv !== undefined) await csv.append(records, options.explode, options.warn);
          else for (const record of records) await stream.write(record);
          if (stream.closed) throw gone();
          remember(records);
        },
      };
    }
    case 'stream':
      throw new ExtractError(
        'usage',
        `-o ${target.destination.path} is a stream (a FIFO, a device or a descriptor): extract watch appends to files; write -o - and pipe it, or name a .jsonl or .csv file`,
      );
    case 'file': {
      if (target.format === 'json')
        throw cannotGrow(`-o ${relative(options.cwd, target.path) || target.path}`, 'watch');
      const path = followLinks(target.path).path;
      const format = target.format;
      const { file, text } = await _guard(path, () => openGrowingFile(path, format));
      if (format === 'csv') {
        const csv = await _guard(path, async () =>
          (await import('./append-csv.ts')).openCsvFile(
            path,
            text,
            (more) => file.append(more),
            undefined,
            options.formulaProtection,
          ),
        );
        remember(csv.rows);
        return {
          holds,
          async append(records) {
            await _guard(path, () => csv.append(records, options.explode, options.warn));
            remember(records);
          },
        };
      }
      remember(jsonlRows(text).flatMap((r) => (r.file === null ? [] : [{ file: r.file, document_id: r.document_id }])));
      return {
        holds,
        async append(records) {
          await _guard(path, () => file.append(records.map(jsonLine).join('')));
          remember(records);
        },
      };
    }
    case 'dir': {
      const dir = target.path;
      return {
        holds: (r) => existsSync(_mirrored(dir, options, r.file)),
        async append(records) {
          for (const record of records) {
            const path = _mirrored(dir, options, record.file);
            await _guard(path, async () => {
              await mkdir(dirname(path), { recursive: true });
              await writeFileAtomic(path, [documentJson(record)]);
            });
          }
        },
      };
    }
  }
}

function _key(r: { file: string; document_id: string | null }): string {
  return `${r.file}\u0000${r.document_id ?? ''}`;
}

/** The folder output's path of a file: mirrored below the watched folders, as a batch run mirrors its inputs. */
function _mirrored(dir: string, options: AppenderOptions, file: string): string {
  return keptPath(dir, relative(options.base, resolve(options.cwd, file)), file);
}

async function _write(out: Writable, text: string): Promise<void> {
  if (text !== '' && !out.write(text)) await drained(out);
}

/** A failed write of the file system, in the user's words; anything else is a bug, passed on. */
async function _guard<T>(path: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    // A refusal of ours (a CSV of other columns) is said as it is, not as a failed write.
    if (err instanceof ExtractError) throw err;
    const code = errnoCode(err);
    if (code === undefined || code.startsWith('ERR_')) throw err;
    throw new ExtractError(
      'output',
      `cannot append to ${path} (${code}): the results are in the journal; fix it and restart extract watch, which writes what is missing and pays nothing again`,
      { cause: err },
    );
  }
}
