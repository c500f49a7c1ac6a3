import type { ColorChoice } from '../ui/color.ts';
import type { MissingMarker } from '../outputs/missing-marker.ts';
import type { Readable, Writable } from 'node:stream';
import type { CircuitPolicy, ClientDeps, PollPolicy } from '../client/index.ts';
import type { WriteBytes } from '../journal/journal.ts';
import type { LockDeps } from '../journal/lock.ts';
import type { KeySource } from './session.ts';
import type { Verbosity } from '../ui/progress.ts';
import type { RouteFlag } from './route.ts';
import type { ReportEntry } from './summary.ts';
import type { FileStamp } from './discover.ts';

/** Everything `extract [options] <inputs...>` decides, already parsed and checked by the CLI layer. */
export type BatchOptions = {
  baseUrl: string;
  /** Absent only for --dry-run, which sends nothing. */
  apiKey: string | undefined;
  /** Where the key came from (--api-key, EXTRACT_API_KEY, the config store), for the hint when it is rejected. */
  keySource?: KeySource | undefined;
  route: RouteFlag;
  inlineMax: number;
  /** -c: files being sent at once (upload-url, PUT, extract). */
  concurrency: number;
  /** Documents being polled at once; polling holds no send slot. */
  maxPending: number;
  poll: PollPolicy;
  /** Journal path or postgres:// URL, null for --no-state, undefined for the user's journal of the service (state/user-journal.ts). */
  state: string | null | undefined;
  /** A shared journal's claim lasts this long without renewal (--lease). */
  leaseMs: number;
  /** How long an unreachable state database is waited for (--state-wait). */
  stateWaitMs: number;
  fresh: boolean;
  /** --all-files: send every file found, not only PDFs and images. */
  allFiles?: boolean | undefined;
  /** --follow-links: a directory walk follows symbolic links that lead out of the folder. */
  followLinks?: boolean | undefined;
  /** CSV cells a spreadsheet would run as a formula get a leading `'`; false: --no-formula-protection. */
  formulaProtection?: boolean | undefined;
  /** --hidden: a directory walk (and a pattern) takes hidden names as any other; else they are named as skipped. */
  hidden?: boolean | undefined;
  retryFailed: boolean;
  dryRun: boolean;
  maxCredits: number | undefined;
  ignore: string[];
  out: string | undefined;
  format: string | undefined;
  explode: string | undefined;
  report: string | undefined;
  /** --review FILE: the completed documents with null fields, as JSON Lines (the shape of listen's review.jsonl). */
  review?: string | undefined;
  /**
   * --missing-marker: a result leaf exactly equal to this text is missing (null in every output,
   * reviewed); null: none is (--no-missing-marker). Absent: DEFAULT_MISSING_MARKER.
   */
  missingMarker?: MissingMarker | undefined;
  noProgress: boolean;
  verbosity: Verbosity;
  /** --color: the reporter's colours (ui/color.ts); absent is auto. */
  color?: ColorChoice | undefined;
  /** --settle: files changed less than this long ago are left for the next run (batch/settle.ts); 0: off. */
  settleMs?: number | undefined;
  /** --move-done DIR, --move-failed DIR (batch/move.ts). */
  moveDone?: string | undefined;
  moveFailed?: string | undefined;
  /**
   * The inputs are files extract watch found in these folders (as named): a non-document among
   * them is skipped, as in a folder walk, and a link among them that leads out of its folder is
   * left out unless --follow-links (discover.ts `foundIn`).
   */
  asFound?: string[] | undefined;
  /** Files sent by upload above this size are hashed while they are uploaded (HASH_WHILE_SENDING_ABOVE; tests lower it). */
  hashWhileSendingAbove?: number | undefined;
};

/**
 * 64 MiB: below, a file is hashed before it is sent (reading it twice costs little, and a
 * rerun knows it before any upload); above, it is read once, hashed as it is uploaded.
 */
export const HASH_WHILE_SENDING_ABOVE = 64 * 1024 * 1024;

/** The journal's default place: the working directory, so a cron job's reruns find it. */
/** What --help says of the journal when --state is not given (state/user-journal.ts). */
export const DEFAULT_STATE_HELP = '$XDG_STATE_HOME/extract/journals/<service>.sqlite, else ~/.local/state/extract/…';

/** -c: files being sent at once. */
export const DEFAULT_CONCURRENCY = 4;

/** Documents being polled at once. */
export const DEFAULT_MAX_PENDING = 64;

/** How long a shared journal's claim lasts without renewal; the holder renews it every third of that. */
export const DEFAULT_LEASE_MS = 30_000;

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
