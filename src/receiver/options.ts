import type { WebhookAuth } from '../contract/index.ts';
import type { Writable } from 'node:stream';
import type { MissingMarker } from '../outputs/missing-marker.ts';

/** How the sender proves itself (spec, "Authentication" 3): per integration, none, bearer or basic. */
export type ReceiverAuth = WebhookAuth;

export type ReceiverOptions = {
  /** Address to bind; loopback unless the sender lives on another machine. */
  host?: string;
  /** Port to listen on; 0 picks a free one. */
  port?: number;
  /** The one path events are accepted on. */
  path?: string;
  auth: ReceiverAuth;
  /** The inbox (SQLite) and review.jsonl live here; the same directory after a restart keeps deduplication. */
  dataDir: string;
  /** -o: a .jsonl/.json/.csv file or a directory (see outputs/target.ts); absent is JSON Lines on stdout. */
  out?: string | undefined;
  /** --format: json, jsonl, csv or dir. */
  format?: string | undefined;
  /** CSV: neutralise cells a spreadsheet would run as a formula; false: --no-formula-protection. */
  formulaProtection?: boolean | undefined;
  /** One line per event, 401, 400, 413, and the count on close (stderr in the CLI). */
  log: (line: string) => void;
  /** Log lines as NDJSON instead of text. */
  json?: boolean | undefined;
  /** -q: no line per event received (or test event, or review); errors and refusals still. */
  quiet?: boolean | undefined;
  /** Bodies larger than this are 413. */
  maxBodyBytes?: number | undefined;
  /** At most this many connections open (src/net/connections.ts: the idle longest is closed, else 503). */
  maxConnections?: number | undefined;
  /**
   * Waits this long after an acknowledgement before the worker processes the inbox.
   * Only for tests and demonstrations of durability: it opens a window in which a kill
   * lands between the 200 and the processing.
   */
  workerDelayMs?: number | undefined;
  /**
   * The worker takes events up to this many bytes of bodies at a time, and outputs are written
   * from the inbox in pages of about this size: what listen holds in memory is bounded by it.
   */
  batchBytes?: number | undefined;
  /** A value exactly this text is missing (null, for review); null: none is. Absent: DEFAULT_MISSING_MARKER. */
  missingMarker?: MissingMarker | undefined;
};

export type ReceiverDeps = {
  now: () => Date;
  /** Where JSON Lines go without -o. */
  stdout: Writable;
  /** Resolves a relative -o. */
  cwd: string;
};

export type ReceiverStats = {
  /** Events acknowledged with 2xx and stored by this run (new, duplicate and kept). */
  received: number;
  /** Acknowledged events whose document_id had been seen before: no-ops. */
  duplicates: number;
  /** Acknowledged events of a shape listen cannot write: kept in the inbox, not written. */
  kept: number;
  /** Integrations' test actions: acknowledged, never stored. */
  tests: number;
  /** 400 (not a JSON object), 403 (not this machine's) and 413 (too large). */
  rejected: number;
  /** 401: missing or wrong credentials. */
  unauthorized: number;
};

export type RunningReceiver = {
  /** The full URL events are accepted on, path included, e.g. http://127.0.0.1:8788/webhook */
  url: string;
  /** Stops accepting, lets the worker finish what was acknowledged, closes the inbox, logs the count. */
  close(): Promise<void>;
  stats(): ReceiverStats;
  /** Resolves once every acknowledged event is processed and written to the outputs. */
  drained(): Promise<void>;
};

export const RECEIVER_DEFAULTS = {
  host: '127.0.0.1',
  port: 8788,
  path: '/webhook',
  /** Five MiB: the spec gives no payload limit; results of a long document with tables fit well below it. */
  maxBodyBytes: 5 * 1024 * 1024,
} as const;
