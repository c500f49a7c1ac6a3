import { statSync } from 'node:fs';
import { access, constants, mkdir } from 'node:fs/promises';
import { dirname, extname, sep } from 'node:path';
import { errnoCode } from '../errno.ts';
import { ExtractError } from '../errors.ts';
import { destinationOf, type StreamDestination } from './destination.ts';
import { checkDescriptor } from './open-stream.ts';
import type { OutputFormat } from './record.ts';

/**
 * Where the records of a run go (README: "Outputs"), decided from -o and --format before
 * anything is submitted, so a typo in -o costs nothing.
 *
 * - stdout + jsonl: streamed as documents finish (createStreamWriter).
 * - stdout + json/csv: written once, at the end.
 * - file: json, jsonl or csv, written atomically at the end (through a symlink to its target).
 * - stream: a device, FIFO, socket or open descriptor (/dev/fd/N: bash's `>(cmd)`), written
 *   at the end as a stream, never replaced; JSON Lines unless the extension or --format says otherwise.
 * - dir: one <name>.json per document, mirroring the inputs' tree.
 */
export type FileFormat = Exclude<OutputFormat, 'dir'>;
export type OutputTarget =
  | { kind: 'stdout'; format: FileFormat }
  | { kind: 'file'; format: FileFormat; path: string }
  | { kind: 'stream'; format: FileFormat; destination: StreamDestination }
  | { kind: 'dir'; path: string };

const FORMAT_BY_EXTENSION: Record<string, FileFormat> = {
  '.json': 'json',
  '.jsonl': 'jsonl',
  '.ndjson': 'jsonl',
  '.csv': 'csv',
};
const FORMAT_NAMES: Record<string, OutputFormat> = {
  json: 'json',
  jsonl: 'jsonl',
  ndjson: 'jsonl',
  csv: 'csv',
  dir: 'dir',
};

export type ResolveOutputOptions = {
  /** The -o value as the user typed it; absent or "-" is stdout. */
  out?: string | undefined;
  /** The --format value: json, jsonl (or ndjson), csv, dir. */
  format?: string | undefined;
  cwd: string;
};

export function resolveOutput({ out = '-', format, cwd }: ResolveOutputOptions): OutputTarget {
  const forced = format === undefined ? undefined : _parseFormat(format);
  const destination = destinationOf(out, cwd);
  if (destination.kind !== 'file') {
    if (forced === 'dir') {
      throw new ExtractError('usage', '--format dir needs a directory: pass -o DIR/ (a path ending in "/")');
    }
    // Like stdout, a stream has no extension to go by (/dev/null, /dev/fd/63): JSON Lines unless told.
    const chosen = forced ?? FORMAT_BY_EXTENSION[extname(out).toLowerCase()];
    if (destination.kind === 'stdout') return { kind: 'stdout', format: chosen ?? 'jsonl' };
    return { kind: 'stream', format: chosen ?? 'jsonl', destination };
  }
  const path = destination.path;
  const existing = statSync(path, { throwIfNoEntry: false });
  const looksLikeDir = out.endsWith('/') || out.endsWith(sep) || existing?.isDirectory() === true;

  if (forced === 'dir' || (forced === undefined && looksLikeDir)) {
    if (existing !== undefined && !existing.isDirectory()) {
      throw new ExtractError('usage', `-o ${out} is a file, not a directory: name a directory, or drop --format dir`);
    }
    return { kind: 'dir', path };
  }
  if (existing?.isDirectory() === true || out.endsWith('/') || out.endsWith(sep)) {
    throw new ExtractError(
      'usage',
      `-o ${out} is a directory, but --format ${format} writes one file: name a file, or use --format dir`,
    );
  }
  const byExtension = FORMAT_BY_EXTENSION[extname(path).toLowerCase()];
  const chosen = forced ?? byExtension;
  if (chosen === undefined) {
    throw new ExtractError(
      'usage',
      `cannot tell the output format of -o ${out} from its extension: name it .json, .jsonl, .ndjson or .csv, ` +
        'end it with "/" for one file per document, or pass --format json|jsonl|csv|dir',
    );
  }
  return { kind: 'file', format: chosen, path };
}

/** --explode shapes CSV rows only: with any other output it would be silently ignored, so it is refused. */
export function checkExplode(target: OutputTarget, explode: string | undefined): void {
  if (explode === undefined) return;
  const format = target.kind === 'dir' ? 'dir' : target.format;
  if (format !== 'csv') {
    throw new ExtractError(
      'usage',
      `--explode ${explode} writes one CSV row per table row, but the output is ${format}: write -o FILE.csv (or --format csv), or drop --explode`,
    );
  }
}

/** True when records go to stdout one by one as documents finish, through createStreamWriter. */
export function isStreamed(target: OutputTarget): boolean {
  return target.kind === 'stdout' && target.format === 'jsonl';
}

/**
 * Creates the output's directory and checks it can be written, so that a run fails before
 * it pays for anything rather than after.
 */
export async function prepareOutput(target: OutputTarget): Promise<void> {
  if (target.kind === 'stdout') return;
  if (target.kind === 'stream') return _checkStream(target.destination);
  const dir = target.kind === 'dir' ? target.path : dirname(target.path);
  try {
    await mkdir(dir, { recursive: true });
    await access(dir, constants.W_OK);
  } catch (err) {
    const reason = errnoCode(err) ?? 'not writable';
    throw new ExtractError(
      'usage',
      `cannot write the output in ${dir} (${reason}): choose another -o, or fix its permissions`,
      {
        cause: err,
      },
    );
  }
}

/**
 * -o, --report and --review cannot share stdout: two documents on one stream are neither.
 * Checked before anything is sent; a dry run prints its plan on stdout, so it counts as taken.
 */
export function checkSharedStdout(
  target: OutputTarget,
  report: string | undefined,
  dryRun: boolean,
  cwd: string,
  others: ReadonlyArray<{ flag: string; path: string | undefined }> = [],
): void {
  const streams = [
    ...[{ flag: '--report', path: report }, ...others]
      .filter((o) => o.path !== undefined && destinationOf(o.path, cwd).kind === 'stdout')
      .map((o) => `${o.flag} ${o.path}`),
    ...(dryRun ? ["the dry run's plan"] : target.kind === 'stdout' ? ['the records (-o, stdout unless given)'] : []),
  ];
  if (streams.length < 2) return;
  throw new ExtractError(
    'usage',
    `${streams.join(' and ')} would ${streams.length === 2 ? 'both' : 'all'} go to stdout, and two streams cannot share it: write all but one of them to a file (--report report.json, --review review.jsonl, -o FILE)`,
  );
}

/** A descriptor that is not open, or a device this user may not write, fails before anything is paid for. */
async function _checkStream(destination: StreamDestination): Promise<void> {
  try {
    if (destination.kind === 'fd') checkDescriptor(destination.fd);
    else if (destination.type === 'device') await access(destination.path, constants.W_OK);
  } catch (err) {
    const reason = errnoCode(err) ?? 'not writable';
    const what =
      destination.kind === 'fd'
        ? `file descriptor ${destination.fd} was not opened for writing by the shell (${destination.fd}>FILE opens it)`
        : 'it cannot be written';
    throw new ExtractError(
      'usage',
      `cannot write the output ${destination.path} (${reason}): ${what}: choose another -o`,
      {
        cause: err,
      },
    );
  }
}

function _parseFormat(format: string): OutputFormat {
  const known = FORMAT_NAMES[format.toLowerCase()];
  if (known === undefined) {
    throw new ExtractError('usage', `unknown --format "${format}": use json, jsonl, csv or dir`);
  }
  return known;
}
