import type { MissingMarker } from '../outputs/missing-marker.ts';
import type { Readable, Writable } from 'node:stream';
import type { CircuitPolicy, ClientDeps, PollPolicy } from '../client/index.ts';
import type { WriteBytes } from '../journal/journal.ts';
import type { LockDeps } from '../journal/lock.ts';
import type { RunJournalOptions } from '../journal/run-journal.ts';
import type { KeySource } from './session.ts';
import type { Verbosity } from '../ui/progress.ts';
import type { RunValues } from '../flags/batch.ts';
import type { ReportEntry } from './summary.ts';
import type { FileStamp } from './discover.ts';

/**
 * The flags of `extract` that reach the run joined with others, or not at all: every other flag
 * of its table (RUN_FLAGS) is an option of the run under its own name, as parsed. The joins are
 * cli/flags.ts batchOptionsFromFlags.
 */
export const JOINED_FLAGS = [
  // -> poll
  'pollInterval',
  'pollMaxInterval',
  'pollTimeout',
  // -> verbosity
  'quiet',
  'verbose',
  // -> missingMarker, with the config store
  'missingMarker',
  'noMissingMarker',
  // -> state, with the environment and the config store
  'state',
  'noState',
  // -> the service target, with the environment and the config store
  'apiKey',
  'baseUrl',
  'local',
  // stdout's shape: the CLI's (cli/json-output.ts)
  'json',
] as const;

/** Everything `extract [options] <inputs...>` decides, already parsed and checked by the CLI layer. */
export type BatchOptions = Omit<RunValues, (typeof JOINED_FLAGS)[number]> & {
  /** --poll-interval, --poll-max-interval, --poll-timeout, checked against each other. */
  poll: PollPolicy;
  /** -q, -v. */
  verbosity: Verbosity;
  /**
   * --missing-marker: a result leaf exactly equal to this text is missing (null in every output,
   * reviewed); null: none is (--no-missing-marker). Absent: DEFAULT_MISSING_MARKER.
   */
  missingMarker?: MissingMarker | undefined;
  // Not flags: the service target, the journal spec, what extract watch and tests add.
  baseUrl: string;
  /** Absent only for --dry-run, which sends nothing. */
  apiKey: string | undefined;
  /** Where the key came from (--api-key, EXTRACT_API_KEY, the config store), for the hint when it is rejected. */
  keySource?: KeySource | undefined;
  /** Journal path or postgres:// URL, null for --no-state, undefined for the user's journal of the service (state/user-journal.ts). */
  state: string | null | undefined;
  /**
   * The inputs are files extract watch found in these folders (as named): a non-document among
   * them is skipped, as in a folder walk, and a link among them that leads out of its folder is
   * left out unless --follow-links (discover.ts `foundIn`).
   */
  asFound?: string[] | undefined;
  /** Tests only: files sent by upload above this size are hashed while they are uploaded (HASH_WHILE_SENDING_ABOVE). */
  hashWhileSendingAbove?: number | undefined;
};

/** What discovery reads of the run's options (discover/find.ts findInputs): the inputs' reading, cutting and leaving out. */
const DISCOVER_KEYS = [
  'header',
  'pages',
  'split',
  'passwordFile',
  'ignore',
  'moveDone',
  'moveFailed',
  'followLinks',
  'hidden',
  'asFound',
  'concurrency',
] as const satisfies readonly (keyof BatchOptions)[];
export type DiscoverOptions = Pick<BatchOptions, (typeof DISCOVER_KEYS)[number]>;

/** What opens the run's journal, as journal/run-journal.ts declares it (the pick below must make a whole RunJournalOptions). */
const JOURNAL_KEYS = [
  'state',
  'baseUrl',
  'dryRun',
  'fresh',
  'lease',
  'stateWait',
] as const satisfies readonly (keyof RunJournalOptions)[];

const pick = <K extends keyof BatchOptions>(options: BatchOptions, keys: readonly K[]): Pick<BatchOptions, K> =>
  Object.fromEntries(keys.map((k) => [k, options[k]])) as Pick<BatchOptions, K>;

/**
 * The run's options split at the top of the run, for the phases that take only their own part:
 * discovery, and the run's journal (journal/run-journal.ts opens it from these alone). The plan,
 * send and finish steps read the run's options whole.
 */
export function phaseOptions(options: BatchOptions): { discover: DiscoverOptions; journal: RunJournalOptions } {
  return { discover: pick(options, DISCOVER_KEYS), journal: pick(options, JOURNAL_KEYS) };
}

/**
 * 64 MiB: below, a file is hashed before it is sent (reading it twice costs little, and a
 * rerun knows it before any upload); above, it is read once, hashed as it is uploaded.
 */
export const HASH_WHILE_SENDING_ABOVE = 64 * 1024 * 1024;

export type StopSignal = 'SIGINT' | 'SIGTERM';

/** The outside world of a run: the client's deps plus streams, environment and signals. */
export type BatchDeps = ClientDeps & {
  cwd: string;
  env: Record<string, string | undefined>;
  stdin?: Readable | undefined;
  stdout: Writable;
  stderr: Writable;
  /** Whether stderr is a terminal (progress bar, colours). */
  isTTY: boolean;
  /** Subscribes to SIGINT/SIGTERM; returns the unsubscribe. */
  onSignal?: ((handler: (signal: StopSignal) => void) => () => void) | undefined;
  /** A second SIGINT: leave at once (the CLI's process.exit). */
  exitNow?: ((code: number) => void) | undefined;
  lock?: LockDeps | undefined;
  /** How the journal file's bytes are written (tests inject a full disk); fs.writeSync by default. */
  writeJournal?: WriteBytes | undefined;
  /** When to stop sending to a service that does not answer (tests shorten it). */
  circuit?: CircuitPolicy | undefined;
  /** Each record as it is known (extract watch appends and logs it): documents end in any order. */
  onRecord?: ((entry: ReportEntry, read?: FileStamp) => void) | undefined;
  /**
   * Called when the run first reads a document or has one to send, or finds a batch of more
   * than one plan window (cli/heap.ts favourMemory): a smaller rerun that only stats its files
   * and copies records from the journal keeps V8's defaults.
   */
  favourMemory?: (() => void) | undefined;
  /** Files the plan takes at a time (run.ts PLAN_WINDOW); tests make windows of a few files. */
  planWindow?: number | undefined;
  /**
   * Called with a document's file (as given) just before its bytes are read to be sent: tests
   * change the file here, between the plan that hashed it and the send, without a race.
   */
  beforeSend?: ((file: string) => void | Promise<void>) | undefined;
};
