import { DEFAULT_POLL } from '../client/backoff.ts';
import { ExtractError } from '../errors.ts';
import { DEFAULT_LEASE_MS } from '../journal/state/journal-state.ts';
import { DEFAULT_STATE_WAIT_MS } from '../journal/state/outage.ts';
import { COMMON_FLAGS } from './common.ts';
import { INPUT_FLAGS } from './inputs.ts';
import { defineFlags, type FlagValues, pickFlags } from './spec.ts';

/** --route's choices: how a file travels (batch/route.ts), or by its size. */
export const ROUTES = ['auto', 'inline', 'upload'] as const;

/**
 * 3.3 MB: base64 inflates a file by 4/3, so a 3.3 MB file is a ~4.4 MB body, within the 4.5 MB
 * request body the deployed service's platform takes (a larger one is a 413), and well under the
 * emulator's default inline cap of 10 MiB.
 */
export const DEFAULT_INLINE_MAX = 3_300_000;

/** `extract watch`: a file is sent once its size and mtime have not changed for this long. */
const DEFAULT_SETTLE_MS = 3000;

/** `extract watch`: every watched folder is listed again this often, for the events a network share loses. */
const DEFAULT_RESCAN_MS = 60_000;

/**
 * The flags of the commands that send or read a batch: `extract [options] <inputs...>`,
 * `extract watch`, `extract get`, `extract status`, `extract journal compact`. A flag two
 * commands share is declared once here; a command that says it differently in --help
 * overrides only the description.
 */

/** What --help says of the journal when --state is not given (state/user-journal.ts). */
export const DEFAULT_STATE_HELP = '$XDG_STATE_HOME/extract/journals/<service>.sqlite, else ~/.local/state/extract/…';

/**
 * --explode's values, checked when the run starts, before anything is paid for: one table at
 * a time (two tables in one CSV would need a cross product of their rows), a dotted path with
 * no empty segment (`lines` or `order.lines`).
 */
function explodePath(values: readonly string[], flag: string): string | undefined {
  if (values.length > 1) {
    throw new ExtractError(
      'usage',
      `${flag} takes one table per run, got ${values.join(', ')}: keep one, and write another CSV for the other`,
    );
  }
  const path = values[0];
  if (path !== undefined && (path === '' || path.split('.').some((s) => s === ''))) {
    throw new ExtractError(
      'usage',
      `${flag} "${path}" is not a field path: name a Table field, such as lines or order.lines`,
    );
  }
  return path;
}

/** Output, polling and service flags: the batch run's, also get's. */
const POLL = defineFlags({
  pollInterval: {
    kind: 'duration',
    value: 'duration',
    description: 'first delay between polls, x1.5 after each',
    default: DEFAULT_POLL.intervalMs,
  },
  pollMaxInterval: {
    kind: 'duration',
    value: 'duration',
    description: 'longest delay between polls',
    default: DEFAULT_POLL.maxIntervalMs,
  },
  pollTimeout: {
    kind: 'duration',
    value: 'duration',
    description: 'give up polling a document after this long (exit 5; a rerun resumes)',
    default: DEFAULT_POLL.timeoutMs,
  },
});

const STATE_WAIT = {
  kind: 'duration',
  value: 'duration',
  description:
    'with a shared journal (postgres://, .sqlite): how long to wait for the database when it is unreachable or locked (then exit 6)',
  default: DEFAULT_STATE_WAIT_MS,
} as const;

/**
 * The service's missing marker: how results are read, by every command that writes or lists
 * them (a run, watch, get, status, listen). No default here: the config store's missing_marker
 * comes between the flag and DEFAULT_MISSING_MARKER (cli/stored-settings.ts).
 */
export const MISSING_MARKER_FLAGS = defineFlags({
  missingMarker: {
    kind: 'text',
    value: 'text',
    description:
      'a result value exactly this text is missing: null in every output and listed for review (default "-", what the deployed service writes; or the config store\'s missing_marker)',
  },
  noMissingMarker: {
    kind: 'off',
    description: 'read no value as missing: "-" stays a value (a service that writes null for what it could not read)',
  },
});

/** `extract [options] <inputs...>`, in the order --help lists them. */
export const RUN_FLAGS = defineFlags({
  out: {
    kind: 'path',
    short: 'o',
    value: 'path',
    description:
      'where records go: - (stdout, JSON Lines), FILE.json, FILE.jsonl, FILE.csv, DIR/ (one JSON per document), or a device, FIFO or /dev/fd/N (a stream)',
  },
  format: { kind: 'text', value: 'format', description: 'json, jsonl, csv or dir; overrides the extension of -o' },
  noFormulaProtection: {
    kind: 'off',
    description:
      "CSV: write values as they are; by default a cell starting with = + - @ (a phone number +1 555...) gets a leading ' so a spreadsheet shows it, never runs it",
  },
  explode: {
    kind: 'list',
    value: 'field',
    description: 'CSV: one row per row of this Table field, document columns repeated',
    parse: explodePath,
  },
  route: {
    kind: 'text',
    value: 'route',
    description: 'force a route; auto chooses by size',
    choices: ROUTES,
    default: 'auto',
  },
  inlineMax: {
    kind: 'size',
    value: 'size',
    description: 'largest file sent inline (base64 adds a third): 500000, 512KB, 8MB',
    default: DEFAULT_INLINE_MAX,
  },
  concurrency: {
    kind: 'count',
    short: 'c',
    value: 'n',
    description: 'files being sent at once (lowered automatically on 429)',
    default: 4,
  },
  maxPending: {
    kind: 'count',
    value: 'n',
    description: 'documents being polled at once',
    default: 64,
  },
  ...POLL,
  state: {
    kind: 'path',
    value: 'file|url',
    description: `the journal that makes reruns resume and never pay twice: a file (.jsonl; .sqlite/.db shared by runs on this machine), or postgres://… shared by many workers (or EXTRACT_STATE_URL); default: the user's journal of the service, ${DEFAULT_STATE_HELP}`,
  },
  lease: {
    kind: 'duration',
    value: 'duration',
    description:
      'with a shared journal (postgres://, .sqlite): how long a worker holds a document without renewing (renewed every third)',
    default: DEFAULT_LEASE_MS,
    atLeast: { ms: 1000, why: 'a shorter lease is lost to an ordinary pause' },
  },
  stateWait: STATE_WAIT,
  noState: { kind: 'off', description: 'keep no journal (a rerun sends everything again)' },
  fresh: {
    kind: 'switch',
    description: 'send every file again, whatever earlier runs recorded (the journal forgets nothing)',
  },
  retryFailed: {
    kind: 'switch',
    description:
      'send again documents that failed in a way that may have cost something (failures that cost nothing are retried anyway)',
  },
  allFiles: {
    kind: 'switch',
    description: 'send every file found in directories and by patterns, not only PDFs and images',
  },
  ...INPUT_FLAGS,
  followLinks: {
    kind: 'switch',
    description: 'follow symbolic links that lead out of a folder walked (a file named by itself is always read)',
  },
  hidden: {
    kind: 'switch',
    description:
      'walk hidden files and folders (names starting with a dot) as any other; by default they are skipped and listed',
  },
  ignore: { kind: 'list', value: 'pattern', description: 'leave out files matching this glob (repeatable)' },
  dryRun: {
    kind: 'switch',
    description: 'list each file, its route and page count, and the credits the run would cost; send nothing',
  },
  maxCredits: {
    kind: 'count',
    value: 'n',
    description: 'stop submitting before the pages of this run would exceed n',
    min: 0,
  },
  report: {
    kind: 'path',
    value: 'file',
    description: 'write the summary as JSON, one entry per document (- for stdout)',
  },
  review: {
    kind: 'path',
    value: 'file',
    description: 'write the completed documents with null fields, for a person, as JSON Lines (- for stdout)',
  },
  ...MISSING_MARKER_FLAGS,
  moveDone: {
    kind: 'path',
    value: 'dir',
    description:
      'once its record is written, move each completed file into DIR (path under the folder kept; a clash gets "name (1).pdf")',
  },
  moveFailed: {
    kind: 'path',
    value: 'dir',
    description: 'likewise for files that failed in a way that fails again (set aside)',
  },
  settle: {
    kind: 'duration',
    value: 'duration',
    description:
      'leave files changed less than this long ago (still being written?) for the next run, with a line saying so; a bare number is seconds; 0 is off',
    default: 0,
  },
  noProgress: { kind: 'off', description: 'plain timestamped lines instead of a progress bar' },
  json: {
    kind: 'switch',
    description:
      'stdout: NDJSON events for scripts (started, a record per document as it ends, the summary; docs/json.md); records still go to -o FILE when given',
  },
  quiet: { ...COMMON_FLAGS.quiet, description: 'print only errors, and the reason of a non-zero exit' },
  verbose: { ...COMMON_FLAGS.verbose, description: 'print every request' },
  color: COMMON_FLAGS.color,
  apiKey: {
    kind: 'text',
    value: 'key',
    description: 'API key (ext_...); prefer EXTRACT_API_KEY or "extract config set api_key -"',
  },
  baseUrl: {
    kind: 'text',
    value: 'url',
    description: 'base URL of the service (or EXTRACT_BASE_URL, or the config store)',
  },
  local: { kind: 'switch', description: 'run against an in-process emulator (no account needed)' },
});
export type RunValues = FlagValues<typeof RUN_FLAGS>;

/**
 * `extract watch`: the batch run's flags that mean the same for a watcher, then its own. Left
 * out: what has no end to wait for (--report, --dry-run, --max-credits), what would pay twice
 * across restarts (--no-state, --fresh), and --retry-failed (a watcher sends a failed file again
 * when it changes).
 */
export const WATCH_FLAGS = defineFlags({
  ...pickFlags(RUN_FLAGS, [
    'explode',
    'route',
    'inlineMax',
    'concurrency',
    'maxPending',
    'pollInterval',
    'pollMaxInterval',
    'pollTimeout',
    'state',
    'lease',
    'stateWait',
    'allFiles',
    'pages',
    'split',
    'passwordFile',
    'followLinks',
    'hidden',
    'noFormulaProtection',
    'ignore',
    'missingMarker',
    'noMissingMarker',
    'moveDone',
    'moveFailed',
    'quiet',
    'verbose',
    'color',
    'apiKey',
    'baseUrl',
    'local',
  ]),
  out: {
    ...RUN_FLAGS.out,
    description:
      'where records are appended as documents complete: - (stdout, JSON Lines), FILE.jsonl, FILE.csv (one header) or DIR/ (one JSON per document)',
  },
  format: { ...RUN_FLAGS.format, description: 'jsonl, csv or dir; overrides the extension of -o' },
  settle: {
    kind: 'duration',
    value: 'duration',
    description: 'send a file once its size and mtime are unchanged this long',
    default: DEFAULT_SETTLE_MS,
  },
  rescan: {
    kind: 'duration',
    value: 'duration',
    description: 'list every folder again this often: finds files whose events were lost (network shares)',
    default: DEFAULT_RESCAN_MS,
    atLeast: { ms: 1000, why: 'each rescan lists every watched folder' },
  },
  noEvents: { kind: 'off', description: 'no file events: only the rescan finds files (NFS, SMB, some FUSE mounts)' },
  json: {
    kind: 'switch',
    description:
      'stdout: NDJSON events for scripts (started, a record per document as it ends, stopped; docs/json.md); records still go to -o FILE when given',
  },
});
export type WatchValues = FlagValues<typeof WATCH_FLAGS>;

/** `extract get <document_id...>`. */
export const GET_FLAGS = defineFlags({
  wait: { kind: 'switch', description: 'poll documents still processing until they complete or fail' },
  out: { ...RUN_FLAGS.out, description: 'where records go: - (stdout), FILE.json, FILE.jsonl, FILE.csv, DIR/' },
  format: RUN_FLAGS.format,
  explode: { ...RUN_FLAGS.explode, description: 'CSV: one row per row of this Table field' },
  missingMarker: MISSING_MARKER_FLAGS.missingMarker,
  noMissingMarker: {
    ...MISSING_MARKER_FLAGS.noMissingMarker,
    description: 'read no value as missing: show the results as the service gave them, "-" included',
  },
  pollInterval: { ...POLL.pollInterval, description: 'first delay between polls with --wait' },
  pollMaxInterval: POLL.pollMaxInterval,
  pollTimeout: { ...POLL.pollTimeout, description: 'give up waiting after this long (exit 5)' },
  apiKey: { ...RUN_FLAGS.apiKey, description: 'API key (ext_...); prefer EXTRACT_API_KEY' },
  baseUrl: { ...RUN_FLAGS.baseUrl, description: 'base URL of the service' },
  json: {
    kind: 'switch',
    description:
      'stdout: one JSON record per id (JSON Lines), an id the service does not give included as a record with its error (docs/json.md)',
    conflicts: 'out',
  },
  ...COMMON_FLAGS,
});
export type GetValues = FlagValues<typeof GET_FLAGS>;

/** `extract status`. */
export const STATUS_FLAGS = defineFlags({
  state: {
    ...RUN_FLAGS.state,
    description:
      'the journal: a file, or the postgres:// URL the workers share (default: EXTRACT_STATE_URL, the config store, then the user journal of the configured service)',
  },
  json: { kind: 'switch', description: 'print the view as JSON, every worker included (docs/json.md)' },
  failed: {
    kind: 'switch',
    description: 'list the failed documents (file, document_id, when, why, what it may have cost)',
  },
  uncertain: {
    kind: 'switch',
    description:
      'list the documents sent without a known outcome (file, document_id, what it may have cost, why: the run ended, the journal could not be written, a proxy answered, the connection dropped...)',
  },
  needsReview: { kind: 'switch', description: 'list the completed documents with null fields, and which fields' },
  ...MISSING_MARKER_FLAGS,
  stateWait: { ...STATE_WAIT, description: 'how long to wait for an unreachable database (then exit 6)' },
  ...COMMON_FLAGS,
});
export type StatusValues = FlagValues<typeof STATUS_FLAGS>;

/** `extract journal compact`. */
export const COMPACT_FLAGS = defineFlags({
  state: {
    kind: 'path',
    value: 'file',
    description:
      'the journal file (JSON Lines, or SQLite: .sqlite, .db, sqlite:PATH; default: the user journal of the configured service)',
  },
  json: { kind: 'switch', description: 'print what was done as JSON' },
  ...COMMON_FLAGS,
});
export type CompactValues = FlagValues<typeof COMPACT_FLAGS>;
