import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Writable } from 'node:stream';
import { writeFileAtomic } from './atomic.ts';
import { documentJson, jsonArrayChunks, jsonlChunks } from './json.ts';
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
};

export type WriteOutputsResult = { written: string[] };

/**
 * Writes every record of the run at the end, each as its own fields (recordFields: a run's
 * report entries carry more, which no output shows). Records are written in the order given: the
 * pipeline passes them in input order (the order discovery listed the files), including
 * documents completed in earlier runs, so that two runs over the same inputs write the
 * same output. Files are replaced atomically; a directory output writes one file per
 * record, each atomically. A streamed stdout target (isStreamed) has already been written
 * by createStreamWriter, so nothing is written again.
 */
export async function writeOutputs(
  target: OutputTarget,
  records: readonly DocumentRecord[],
  options: WriteOutputsOptions,
): Promise<WriteOutputsResult> {
  const warn = options.warn ?? (() => {});
  switch (target.kind) {
    case 'stdout': {
      if (target.format === 'jsonl') return { written: [] };
      const out = options.stdout;
      // The caller owns the process's streams (cli/); a stdout target without one is a bug here.
      if (out === undefined) throw new Error('writeOutputs: a stdout target needs options.stdout');
      for (const chunk of await _chunks(target.format, records, options.explode, warn)) {
        if (!out.write(chunk)) await drained(out);
      }
      return { written: ['-'] };
    }
    case 'file': {
      await mkdir(dirname(target.path), { recursive: true });
      await writeFileAtomic(target.path, await _chunks(target.format, records, options.explode, warn));
      return { written: [target.path] };
    }
    case 'dir': {
      if (options.explode !== undefined) warn('--explode applies to CSV only; the directory output keeps tables whole');
      const paths = mirroredPaths(
        records.map((r) => r.file),
        options.cwd,
        target.path,
      );
      const made = new Set<string>();
      for (const [i, record] of records.entries()) {
        const path = paths[i];
        if (path === undefined) continue;
        const dir = dirname(path);
        if (!made.has(dir)) await mkdir(dir, { recursive: true });
        made.add(dir);
        await writeFileAtomic(path, [documentJson(record)]);
      }
      return { written: paths };
    }
  }
}

async function _chunks(
  format: FileFormat,
  records: readonly DocumentRecord[],
  explode: string | undefined,
  warn: (message: string) => void,
): Promise<Iterable<string>> {
  // csv-stringify loads only for a CSV output.
  if (format === 'csv') return (await import('./csv-writer.ts')).csvChunks(records, { explode }, warn);
  if (format === 'json') return jsonArrayChunks(records);
  return jsonlChunks(records);
}
